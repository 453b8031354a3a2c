"""Skill packages checked before anything is copied: each way a manifest, a listed file or a zip can be wrong is
a PackageError naming it; an installed package whose files went missing is shown broken, not used."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from bot.agent import skill_packages as packages
from bot.agent.skill_packages import PackageError

MANIFEST = "name: notes-kit\nversion: '1.0'\nskills: [tidy.md]\n"
TIDY = "---\nname: tidy\ndescription: Tidies notes\nmode: tool\ntools: [read_file]\n---\nTidy the notes.\n"


def folder(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    root = tmp_path / "kit"
    root.mkdir(exist_ok=True)
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return root


@pytest.mark.parametrize(("files", "problem"), [
    ({}, "bothub-skill.yaml is listed in the manifest but missing"),
    ({"bothub-skill.yaml": "name: [unclosed"}, "is not valid YAML"),
    ({"bothub-skill.yaml": "- just a list"}, "needs a 'name'"),
    ({"bothub-skill.yaml": "name: 'bad name!'\nskills: [tidy.md]"}, "needs a 'name'"),
    ({"bothub-skill.yaml": "name: kit\nskills: []"}, "needs 'skills'"),
    ({"bothub-skill.yaml": "name: kit\nskills: [run.sh]"}, "needs 'skills'"),
    ({"bothub-skill.yaml": "name: kit\nskills: [../outside.md]"}, "must be inside the package"),
    ({"bothub-skill.yaml": "name: kit\nskills: [/etc/passwd.md]"}, "must be inside the package"),
    ({"bothub-skill.yaml": "name: kit\nskills: [gone.md]"}, "gone.md is listed in the manifest but missing"),
    ({"bothub-skill.yaml": "name: kit\nskills: [big.md]", "big.md": "x" * (packages.MAX_FILE + 1)},
     "must be a regular file of at most 256 KB"),
    ({"bothub-skill.yaml": "name: kit\nskills: [bad.md]", "bad.md": b"\xff\xfe"}, "bad.md: "),
    ({"bothub-skill.yaml": "name: kit\nskills: [bad.md]", "bad.md": "no front matter at all"}, "bad.md: "),
])
def test_a_wrong_package_is_refused_with_its_reason(tmp_path: Path, files: dict[str, str | bytes],
                                                    problem: str) -> None:
    with pytest.raises(PackageError, match=problem.replace("(", r"\(").replace(".", r"\.")):
        packages.read_package(folder(tmp_path, files))


def test_a_listed_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    root = folder(tmp_path, {"bothub-skill.yaml": MANIFEST})
    (tmp_path / "elsewhere.md").write_text(TIDY, encoding="utf-8")
    (root / "tidy.md").symlink_to(tmp_path / "elsewhere.md")
    with pytest.raises(PackageError, match="must be a regular file"):
        packages.read_package(root)


def zipped(tmp_path: Path, entries: dict[str, str], *, link: str | None = None) -> Path:
    path = tmp_path / "kit.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return path


def test_a_zip_of_the_folder_itself_is_unpacked_to_the_package(tmp_path: Path) -> None:
    source = zipped(tmp_path, {"notes-kit/": "", "notes-kit/bothub-skill.yaml": MANIFEST, "notes-kit/tidy.md": TIDY})
    into = tmp_path / "unpacked"
    into.mkdir()
    package = packages.read_package(packages.fetch(str(source), into))
    assert (package.name, package.version, [s.name for s in package.skills]) == ("notes-kit", "1.0", ["tidy"])
    assert packages.fetch(str(tmp_path / "unpacked"), tmp_path / "unused") == into  # a plain folder as it is


@pytest.mark.parametrize(("entries", "link", "problem"), [
    ({"../evil.md": TIDY}, None, "unsafe entry: ../evil.md"),
    ({"/abs.md": TIDY}, None, "unsafe entry: /abs.md"),
    ({"bothub-skill.yaml": MANIFEST}, "tidy.md", "unsafe entry: tidy.md"),
    ({"big.md": "x" * (packages.MAX_FILE + 1)}, None, "big.md is over 256 KB"),
])
def test_an_unsafe_zip_is_refused_before_anything_is_written(tmp_path: Path, entries: dict[str, str],
                                                             link: str | None, problem: str) -> None:
    into = tmp_path / "unpacked"
    into.mkdir()
    with pytest.raises(PackageError, match=problem):
        packages.fetch(str(zipped(tmp_path, entries, link=link)), into)
    assert not (tmp_path / "evil.md").exists()


def test_a_source_that_is_nothing_or_a_failing_clone_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match="not a folder, a git repository or a zip file"):
        packages.fetch(str(tmp_path / "nothing-here"), tmp_path / "into")
    (tmp_path / "fake-repo" / ".git").mkdir(parents=True)  # looks like a repository, is none
    with pytest.raises(PackageError, match="git clone failed"):
        packages.fetch(str(tmp_path / "fake-repo"), tmp_path / "into")


def test_an_installed_package_missing_a_file_or_holding_a_broken_one_is_shown_broken(tmp_path: Path) -> None:
    skills_dir = tmp_path / "skills"
    package = packages.read_package(folder(tmp_path, {"bothub-skill.yaml": MANIFEST, "tidy.md": TIDY}))
    packages.install(skills_dir, package, "kit")
    [skill] = packages.installed_skills(skills_dir)
    assert (skill.name, skill.error, skill.source) == ("tidy", None, "installed")
    (skills_dir / "installed" / "notes-kit" / "tidy.md").unlink()
    [broken] = packages.installed_skills(skills_dir)
    assert broken.enabled is False and broken.error == (
        "package notes-kit: tidy.md is listed in the manifest but missing")
    assert packages.uninstall(skills_dir, "notes-kit") and packages.installed_skills(skills_dir) == []
    assert not packages.uninstall(skills_dir, "notes-kit")
