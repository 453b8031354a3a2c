"""The skills shipped with bothub (typed YAML, seed 001); a workspace skill of the same name replaces one."""
