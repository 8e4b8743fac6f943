"""Rollouts: the agent environment with perturbations, the oracle and vLLM policies, and the stage."""

from .context import MIN_TURNS, compact_limit, compaction_prompt, resume_content, samples
from .env import SYSTEM_PROMPT, TOOLS, Environment, Episode, Task, ToolCall, load_tasks
from .grounding import GroundingReport, check_trajectory
from .measure import held_out_lines, sample_tokens
from .stage import TRAJECTORIES, is_rolled_out, read_report, read_trajectories, rollout_dir, run_rollout

__all__ = [
    "Environment", "Episode", "GroundingReport", "MIN_TURNS", "SYSTEM_PROMPT", "TOOLS", "TRAJECTORIES", "Task",
    "ToolCall", "check_trajectory", "compact_limit", "compaction_prompt", "held_out_lines", "is_rolled_out",
    "load_tasks", "read_report", "read_trajectories", "resume_content", "rollout_dir", "run_rollout",
    "sample_tokens", "samples",
]
