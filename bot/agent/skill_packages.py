"""Installed skill packages (`bothub skills install <path|git URL|zip>`): checked, listed, pinned by content hash.

A package is a folder with a `bothub-skill.yaml` manifest (name, version, description, the skill files it ships).
Every listed file must be a regular file inside the package and a usable skill; nothing else is copied. The
installed copy lives in `skills/installed/<name>/` and its SHA-256 is kept in `skills/installed/lock.json`: a
file changed by hand afterwards no longer matches, and the package's skills are then shown broken, not used.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import stat
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from bot.agent.skills import NAME_RE, SUFFIXES, Skill, SkillError, parse_skill

MANIFEST = "bothub-skill.yaml"
INSTALLED = "installed"
LOCK = "lock.json"
MAX_FILE = 256 * 1024  # bytes of one skill file
MAX_FILES = 50


class PackageError(ValueError):
    """Why a package cannot be installed, worded for the operator."""


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    description: str
    files: dict[str, bytes]  # relative path → content, the manifest included
    skills: list[Skill]

    @property
    def digest(self) -> str:
        return content_hash(self.files)

    @property
    def tools(self) -> list[str]:
        return sorted({t for s in self.skills for t in s.tools})


def content_hash(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode() + b"\0" + hashlib.sha256(files[path]).digest())
    return h.hexdigest()


def fetch(source: str, into: Path) -> Path:
    """The package folder for `source`: a zip file, a git repository (URL or local path), or a plain folder."""
    path = Path(source)
    if path.is_file() and zipfile.is_zipfile(path):
        _unzip(path, into)
        return into
    if "://" in source or source.startswith("git@") or (path / ".git").exists():
        result = subprocess.run(["git", "clone", "--quiet", "--depth", "1", "--", source, str(into)],
                                capture_output=True, text=True, timeout=120,
                                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
        if result.returncode != 0:
            raise PackageError(f"git clone failed: {result.stderr.strip()[-300:]}")
        return into
    if path.is_dir():
        return path
    raise PackageError(f"{source}: not a folder, a git repository or a zip file")


def _unzip(path: Path, into: Path) -> None:
    """Only regular files, only below `into`: no absolute names, no '..', no links."""
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            name = PurePosixPath(info.filename)
            if name.is_absolute() or ".." in name.parts or stat.S_ISLNK(info.external_attr >> 16):
                raise PackageError(f"the zip holds an unsafe entry: {info.filename}")
            if info.is_dir():
                continue
            if info.file_size > MAX_FILE:
                raise PackageError(f"{info.filename} is over {MAX_FILE // 1024} KB")
            target = into.joinpath(*name.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
    roots = list(into.iterdir())
    if not (into / MANIFEST).exists() and len(roots) == 1 and roots[0].is_dir():  # a zip of the folder itself
        for child in roots[0].iterdir():
            child.rename(into / child.name)


def _read(folder: Path, relative: str) -> bytes:
    target = folder / relative
    if PurePosixPath(relative).is_absolute() or ".." in PurePosixPath(relative).parts:
        raise PackageError(f"{relative}: a skill file must be inside the package")
    try:
        info = target.lstat()
    except FileNotFoundError:
        raise PackageError(f"{relative} is listed in the manifest but missing") from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE:
        raise PackageError(f"{relative} must be a regular file of at most {MAX_FILE // 1024} KB")
    return target.read_bytes()


def read_package(folder: Path) -> Package:
    """Check the manifest and every skill file it lists."""
    try:
        meta = yaml.safe_load(_read(folder, MANIFEST))
    except yaml.YAMLError as e:
        raise PackageError(f"{MANIFEST} is not valid YAML: {e}") from e
    if not isinstance(meta, dict) or not NAME_RE.match(str(meta.get("name", ""))):
        raise PackageError(f"{MANIFEST} needs a 'name': letters, digits, '-' or '_'")
    listed = meta.get("skills")
    if not isinstance(listed, list) or not 1 <= len(listed) <= MAX_FILES or not all(
            isinstance(f, str) and f.endswith(SUFFIXES) for f in listed):
        raise PackageError(f"{MANIFEST} needs 'skills': a list of .md or .yaml files (at most {MAX_FILES})")
    files = {MANIFEST: _read(folder, MANIFEST)}
    skills = []
    for relative in listed:
        files[relative] = _read(folder, relative)
        try:
            skills.append(parse_skill(Path(relative), files[relative].decode("utf-8")))
        except (SkillError, UnicodeDecodeError) as e:
            raise PackageError(f"{relative}: {e}") from e
    return Package(str(meta["name"]), str(meta.get("version", "0")), str(meta.get("description") or ""), files,
                   skills)


def lock(skills_dir: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads((skills_dir / INSTALLED / LOCK).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def _write_lock(skills_dir: Path, entries: dict[str, dict[str, object]]) -> None:
    path = skills_dir / INSTALLED / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(entries, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(partial, path)


def install(skills_dir: Path, package: Package, source: str) -> None:
    """Copy the checked files (replacing an earlier version) and pin their hash."""
    target = skills_dir / INSTALLED / package.name
    shutil.rmtree(target, ignore_errors=True)
    for relative, data in package.files.items():
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        (target / relative).write_bytes(data)
    entries = lock(skills_dir)
    entries[package.name] = {"version": package.version, "source": source, "sha256": package.digest,
                             "skills": [f for f in package.files if f != MANIFEST]}
    _write_lock(skills_dir, entries)


def uninstall(skills_dir: Path, name: str) -> bool:
    entries = lock(skills_dir)
    if name not in entries or not NAME_RE.match(name):
        return False
    shutil.rmtree(skills_dir / INSTALLED / name, ignore_errors=True)
    del entries[name]
    _write_lock(skills_dir, entries)
    return True


def diff(skills_dir: Path, package: Package) -> str:
    """What an update changes, as a unified diff of the installed files against the new ones."""
    installed = skills_dir / INSTALLED / package.name
    old = {str(p.relative_to(installed)): p.read_bytes() for p in installed.rglob("*") if p.is_file()}
    lines: list[str] = []
    for relative in sorted(set(old) | set(package.files)):
        before = old.get(relative, b"").decode("utf-8", "replace").splitlines(keepends=True)
        after = package.files.get(relative, b"").decode("utf-8", "replace").splitlines(keepends=True)
        lines += difflib.unified_diff(before, after, f"installed/{relative}", f"new/{relative}")
    return "".join(lines)


def installed_skills(skills_dir: Path) -> list[Skill]:
    """The skills of every installed package whose files still match the pinned hash; the others broken."""
    found: list[Skill] = []
    for name, entry in sorted(lock(skills_dir).items()):
        folder = skills_dir / INSTALLED / name
        listed = entry.get("skills")
        relatives = [f for f in listed if isinstance(f, str)] if isinstance(listed, list) else []
        try:
            files = {r: _read(folder, r) for r in [MANIFEST, *relatives]}
        except PackageError as e:
            found.append(Skill(name=name, enabled=False, error=f"package {name}: {e}", source="installed"))
            continue
        if content_hash(files) != entry.get("sha256"):
            found.append(Skill(name=name, enabled=False, source="installed",
                               error=f"package {name}: files changed since installed (hash mismatch); reinstall it"))
            continue
        for relative in relatives:
            try:
                skill = parse_skill(folder / relative, files[relative].decode("utf-8"))
            except (SkillError, UnicodeDecodeError) as e:
                skill = Skill(name=Path(relative).stem, enabled=False, error=str(e))
            skill.source = "installed"
            found.append(skill)
    return found
