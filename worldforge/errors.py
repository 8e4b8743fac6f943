"""The exception tree. The CLI maps every `WorldforgeError` to a one-line red message
(or a table of problems) and its `exit_code`; anything else is a bug and keeps its traceback."""

from __future__ import annotations

from dataclasses import dataclass

# What an interrupted command prints (Ctrl-C at any point exits 130 with it).
INTERRUPTED = "interrupted; nothing was marked complete (run the same command again to resume)"
TERMINATED = "terminated (SIGTERM); finished shards are kept: run the same command again to resume"


class Terminated(KeyboardInterrupt):
    """SIGTERM (a batch scheduler stopping a job), raised where the program is as Ctrl-C is: the
    same clean-up (temporary files removed, a vLLM engine and its workers shut down), exit 143."""


class WorldforgeError(Exception):
    """Base of every error a user can cause and fix."""

    exit_code = 1


@dataclass(frozen=True)
class SpecProblem:
    """One problem in a spec or pack: where it is, the bad value, what is accepted."""

    source: str  # file the problem is in
    path: str  # dotted field path inside that file ('' for the whole file)
    value: str  # the offending value, shortened
    message: str  # what is wrong and what would be accepted

    def __str__(self) -> str:
        where = f"{self.source}: {self.path}" if self.path else self.source
        shown = f" (got {self.value})" if self.value else ""
        return f"{where}: {self.message}{shown}"


class SpecError(WorldforgeError):
    """A world spec or domain pack is invalid. Carries every problem found, not just the first."""

    exit_code = 2

    def __init__(self, problems: list[SpecProblem]):
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in the world spec"
        super().__init__(head + ":\n" + "\n".join(f"  - {p}" for p in self.problems))

    def __reduce__(self):  # from a worker process or a Ray task, with its problems (not its message's characters)
        return type(self), (self.problems,)


class PlanError(WorldforgeError):
    """The planner could not build a world that satisfies the spec (e.g. an infeasible count)."""


class WorldNotFoundError(WorldforgeError):
    """A world folder does not exist or holds no planned world."""


class WorldExistsError(WorldforgeError):
    """A complete world is already there and --force was not given."""


class IncompleteWorldError(WorldforgeError):
    """A world folder holds an interrupted, half-written plan."""


class InvariantViolationError(WorldforgeError):
    """A world breaks one or more invariants; it is never written as complete."""

    def __init__(self, violations):
        self.violations = list(violations)
        lines = [f"  - {v.name}: could not be checked: {v.examples[0]}" if v.count < 0 else
                 f"  - {v.name} ({v.description}): {v.count} violating row(s); e.g. {v.examples[:2]}" for v in self.violations]
        super().__init__(f"{len(self.violations)} invariant(s) violated:\n" + "\n".join(lines))

    def __reduce__(self):
        return type(self), (self.violations,)


class RenderError(WorldforgeError):
    """The render stage cannot run as asked (already rendered, bad options)."""


class BackendUnavailableError(WorldforgeError):
    """A page-writing backend cannot start: its package is missing or its model is not there."""


class NotRenderedError(WorldforgeError):
    """A world has no rendered pages or search index yet."""


class SearchInputError(WorldforgeError):
    """A search query or URL given to the simulated web is malformed."""


class TasksError(WorldforgeError):
    """The tasks stage cannot run or export as asked (tasks already there, none generated, bad folder)."""


class RolloutError(WorldforgeError):
    """The rollout stage cannot run as asked (no tasks, unknown policy or parser, trajectories already there)."""


class ExportError(WorldforgeError):
    """A dataset cannot be exported as asked (no trajectories, a folder holding another dataset version)."""


class DamagedStateError(WorldforgeError):
    """A file a stage wrote (a report, a task or trajectory file, a database) is truncated,
    unreadable or not what the stage recorded; the message names it and how to rebuild it."""


class BusyError(WorldforgeError):
    """Another worldforge process is working on the same world (its lock is held)."""


class OutputLocationError(WorldforgeError):
    """An output folder cannot be written: read-only, a file in its place, or no space left."""
