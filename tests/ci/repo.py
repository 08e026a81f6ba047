"""The team's repository, a real git repository: main, branches, merges, and checkouts of a
commit into a runner's fresh workspace (what actions/checkout and GitLab's clone do)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(directory: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=directory,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


class Origin:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        git(path, "init", "--quiet", "--initial-branch=main")
        git(path, "commit", "--quiet", "--allow-empty", "-m", "start")

    def commit(
        self,
        branch: str,
        files: dict[str, str | None],
        message: str,
        executable: frozenset[str] = frozenset(),
    ) -> str:
        """Write (or, for None, delete) files on `branch` (made from main if new): the new sha."""
        if branch != "main" and branch not in git(self.path, "branch", "--list", branch):
            git(self.path, "checkout", "--quiet", "-b", branch, "main")
        else:
            git(self.path, "checkout", "--quiet", branch)
        for name, text in files.items():
            target = self.path / name
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
                target.chmod(0o755 if name in executable else 0o644)
        git(self.path, "add", "--all")
        git(self.path, "commit", "--quiet", "--allow-empty", "-m", message)
        sha = git(self.path, "rev-parse", "HEAD")
        git(self.path, "checkout", "--quiet", "main")
        return sha

    def copy_tree(self, branch: str, source: Path, target: str, message: str) -> str:
        files: dict[str, str | None] = {}
        executable = set()
        for path in sorted(source.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                name = f"{target}/{path.relative_to(source)}"
                files[name] = path.read_text()
                if os.access(path, os.X_OK):
                    executable.add(name)
        return self.commit(branch, files, message, frozenset(executable))

    def merge(self, branch: str) -> str:
        """Merge `branch` into main with a merge commit (GitHub's default): its sha."""
        git(self.path, "checkout", "--quiet", "main")
        git(self.path, "merge", "--quiet", "--no-ff", "-m", f"Merge {branch}", branch)
        return git(self.path, "rev-parse", "HEAD")

    def head(self, branch: str = "main") -> str:
        return git(self.path, "rev-parse", branch)

    def changed(self, base: str, head: str) -> list[str]:
        return git(self.path, "diff", "--name-only", base, head).splitlines()

    def checkout(self, sha: str, workspace: Path) -> None:
        """A fresh clone at `sha`, as a runner's checkout step makes one."""
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            raise ValueError(f"not a commit: {sha!r}")
        git(workspace.parent, "clone", "--quiet", str(self.path), workspace.name)
        git(workspace, "checkout", "--quiet", "--detach", sha)
