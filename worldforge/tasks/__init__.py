"""The tasks stage: WideSearch-style table tasks and multi-hop questions with gold answers
from the world store, each proven reachable in the simulated web.

`generate_tasks(world_dir)` is the entry point; see `stage.py` for the layout."""

from .stage import TasksReport, export_widesearch, generate_tasks, read_tasks, tasks_dir

__all__ = ["TasksReport", "export_widesearch", "generate_tasks", "read_tasks", "tasks_dir"]
