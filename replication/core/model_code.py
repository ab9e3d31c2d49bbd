"""The model code a run was measured with: the two trees' modules as code (their syntax trees, docstrings left out),
hashed, so that a run made with other code than main's is marked as such and a change of wording alone marks
nothing; and the mirror between the trees (C6) of that code. Read from the working tree, or from git at a run's
recorded commit (runs recorded before the hash was); where git cannot show that commit (a source archive), from
the committed rendering's record of it (CACHE), so that an archive renders the committed report as a checkout does."""

import ast
import dataclasses
import functools
import hashlib
import json
import re
import subprocess

import msgspec

from replication.core.mirror import MODEL_FOLDERS, mirror_table, working_sources
from replication.core.paths import PAPER, ROOT
from replication.core.records import Mirror, ModelCode
from replication.core.results import loads

CACHE_NAME = "model_code.json"
"""Beside the committed report: {"identities": {commit: identity and mirror}} of every commit a shown run recorded
without its model code, and {"sources": {commit: {path: source}}} of the commit whose code the readability section
shows, as git showed them when the committed report was rendered (written by that rendering, read where git
cannot)."""

TREES = MODEL_FOLDERS
"""The model code's folders of the repository: the two trees and what they share."""


def without_docstrings(tree):
    """The syntax tree with the docstring of the module and of every class and function removed."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
                    isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def code_digest(source):
    """A short hash of a module as code: its syntax tree without docstrings (comments, blank lines and wording
    leave it unchanged)."""
    tree = without_docstrings(ast.parse(source))
    return hashlib.sha256(ast.dump(tree, annotate_fields=False).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=16)
def sources_at(commit, root=ROOT):
    """{path: source} of the model trees' modules at a commit (git), or None where git or the commit is not there
    (a copy without history)."""
    try:
        listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", commit, "--", *TREES], cwd=root,
                                capture_output=True, text=True, check=True).stdout.split()
        return {path: subprocess.run(["git", "show", f"{commit}:{path}"], cwd=root, capture_output=True, text=True,
                                     check=True).stdout
                for path in sorted(listed) if path.endswith(".py") and path.count("/") == 1}
    except (OSError, subprocess.CalledProcessError):
        return None


def identity(sources) -> ModelCode:
    """The model trees' sources as code: the hash of the whole and each module's code_digest (no mirror)."""
    modules = {path: code_digest(source) for path, source in sorted(sources.items())}
    whole = hashlib.sha256("".join(f"{path}:{digest}\n" for path, digest in modules.items()).encode()).hexdigest()
    return ModelCode(hash=whole[:16], modules=modules)


COMMIT = re.compile(r"[0-9A-Za-z.\-/]{1,64}")
"""What a commit hash or a git reference (HEAD, a tag) looks like: nothing markdown or HTML could read as structure."""


def plain_commit(recorded):
    """The commit hash of a recorded git_commit ('abc...-dirty', 'abc... (given by the caller)'), or None (also where
    what was recorded is no commit hash or reference)."""
    if not isinstance(recorded, str) or not recorded.split():
        return None
    commit = recorded.split()[0].removesuffix("-dirty")
    return commit if COMMIT.fullmatch(commit) else None


def differing_modules(run_modules, main_modules):
    """The modules whose code differs between a run's trees and main's (added or removed ones too), sorted."""
    return sorted(path for path in set(run_modules) | set(main_modules)
                  if run_modules.get(path) != main_modules.get(path))


def mirror_total(sources) -> Mirror:
    """C6's total of the sources over the module pairs that differ (mirror.mirror_table)."""
    _, total, identical = mirror_table(sources)
    return Mirror(share=total.share, total=total.total, same=total.same, identical_lines=identical.lines)


def with_mirror(sources) -> ModelCode:
    """The identity of the sources with their mirror (C6)."""
    return msgspec.structs.replace(identity(sources), mirror=mirror_total(sources))


def recorded() -> dict:
    """What a run records of its model code as it starts: the identity of the working tree's trees and their mirror
    (C6), so that the report reads them from the run, not from the code it is rendered with."""
    return msgspec.to_builtins(with_mirror(working_sources()))


@functools.lru_cache(maxsize=64)
def at_commit(commit) -> ModelCode | None:
    """The identity and mirror of the model trees at a commit (git; cached), else as the committed rendering recorded
    it (CACHE), or None where neither knows it."""
    sources = sources_at(commit)
    if sources is not None:
        return with_mirror(sources)
    try:
        return msgspec.convert(cached("identities").get(commit), ModelCode | None)
    except msgspec.ValidationError:
        return None


def sources_or_cached(commit):
    """{path: source} of the model trees at a commit: git's, else the committed rendering's CACHE, else None."""
    return sources_at(commit) or cached("sources").get(commit)


def cached(part, folder=PAPER):
    """One part ("identities" or "sources") of the committed rendering's CACHE ({} where absent, not a regular file
    or not such a record)."""
    path = folder / CACHE_NAME
    if path.is_symlink() or not path.is_file():
        return {}
    try:
        found = loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {}
    found = found.get(part) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else {}


def cache_text(environments, shown_commit):
    """The CACHE's text: the identity of every commit these session records hold without their model code, and the
    sources of shown_commit (the readability section's), as git (or the cache) knows them."""
    commits = {plain_commit(environment.git_commit) for environment in environments if not environment.model_code}
    known = {commit: at_commit(commit) for commit in sorted(commit for commit in commits if commit)}
    sources = sources_or_cached(shown_commit) if shown_commit else None
    return json.dumps({"identities": {commit: msgspec.to_builtins(value) for commit, value in known.items() if value},
                       "sources": {shown_commit: sources} if sources else {}}, indent=1, sort_keys=True) + "\n"


@dataclasses.dataclass(frozen=True)
class RunCode:
    """One code a run was measured with: the commits its sessions recorded, the code (None where not known)."""

    commits: list[str]
    code: ModelCode | None

    @property
    def hash(self) -> str | None:
        return self.code.hash if self.code else None

    @property
    def modules(self) -> dict[str, str]:
        return self.code.modules if self.code else {}

    @property
    def mirror(self) -> Mirror | None:
        return self.code.mirror if self.code else None


def run_code(environments) -> list[RunCode]:
    """The model code a run was measured with, from its environment records (each session's): one entry per
    distinct code, the code as recorded where the record holds it, else (runs recorded before) read from git at the
    recorded commit; an entry with no code where neither is known."""
    codes = {}
    for environment in environments:
        commit = plain_commit(environment.git_commit)
        known = environment.model_code or (at_commit(commit) if commit else None)
        entry = codes.setdefault(known.hash if known else None, RunCode([], known))
        if commit and commit not in entry.commits:
            entry.commits.append(commit)
    return list(codes.values())
