"""The yardsticks for the end-to-end benchmarks: the thinnest bot each platform SDK allows (receive, ask the
model, send one message), in two variants: the whole answer sent once, or streamed into one message edited
at most once a second. Configured like bothub by environment variables."""
