"""Rollouts: the agent environment with perturbations, the oracle and vLLM policies, and the stage."""

from .env import TOOLS, Environment, Episode, Task, ToolCall, load_tasks
from .stage import read_trajectories, run_rollout

__all__ = ["TOOLS", "Environment", "Episode", "Task", "ToolCall", "load_tasks", "read_trajectories", "run_rollout"]
