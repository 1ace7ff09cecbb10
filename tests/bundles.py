"""Hand-made RECLAIM bundles for tests, built from the documented row shape (no real bundle is
public). Our own fixture: nothing here is copied from the release."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any


def bundle(run_id: str = "qwen3-retrain-2501.00001") -> dict[str, Any]:
    rows = [
        {
            "seq": 0,
            "kind": "round_open",
            "round_index": 1,
            "role": "assistant",
            "reasoning": "Clone the repo first.",
            "content": "",
            "finish_reason": "tool_calls",
            "t_rel_s": 3.5,
            "extra_key_we_do_not_know": True,
        },
        {
            "seq": 1,
            "kind": "call_start",
            "round_index": 1,
            "tool_name": "workspace_bash",
            "command": "git clone https://github.com/example/method",
            "detail_kind": "command",
            "args": {"command": "git clone https://github.com/example/method", "timeout": 900},
            "t_rel_s": 3.6,
        },
        {
            "seq": 2,
            "kind": "call_result",
            "round_index": 1,
            "ok": True,
            "rc": 0,
            "duration_s": 4.2,
            "stdout": "Cloning into 'method'...\ndone.\n",
            "stderr": "",
            "truncated": False,
            "t_rel_s": 7.8,
        },
        {
            "seq": 3,
            "kind": "round_open",
            "round_index": 2,
            "role": "assistant",
            "reasoning": "Write the eval config, then train.",
            "content": "",
            "finish_reason": "tool_calls",
            "t_rel_s": 20.0,
        },
        {
            "seq": 4,
            "kind": "call_start",
            "round_index": 2,
            "tool_name": "write_file",
            "command": "workspace/configs/eval.yaml",
            "detail_kind": "path",
            "args": {"path": "workspace/configs/eval.yaml", "content": "lr: 3e-4\n"},
            "t_rel_s": 20.1,
        },
        {
            "seq": 5,
            "kind": "call_result",
            "round_index": 2,
            "ok": True,
            "rc": None,
            "path": "workspace/configs/eval.yaml",
            "duration_s": 0.01,
            "t_rel_s": 20.2,
        },
        {
            "seq": 6,
            "kind": "call_start",
            "round_index": 2,
            "tool_name": "run_gpu",
            "command": "python train.py --config configs/eval.yaml",
            "detail_kind": "command",
            "args": {
                "command": "python train.py --config configs/eval.yaml",
                "gpus": 2,
                "minutes": 90,
            },
            "t_rel_s": 20.3,
        },
        {
            "seq": 7,
            "kind": "call_result",
            "round_index": 2,
            "ok": True,
            "rc": 0,
            "duration_s": 4830.0,
            "stdout": "epoch 10 top1 71.84\n" * 600,
            "stderr": "warning\n",
            "truncated": True,
            "cost_h100": 2.6833,
            "remaining_h100": 29.3167,
            "t_rel_s": 4851.0,
        },
        {
            "seq": 8,
            "kind": "final",
            "round_index": 2,
            "role": "assistant",
            "content": '{"paper_id": "2501.00001"}',
            "exit_reason": "natural",
            "finish_reason": "stop",
            "t_rel_s": 4900.0,
        },
    ]
    audit_rows = [
        {
            "seq": 0,
            "kind": "round_open",
            "round_index": 1,
            "reasoning": "Check the log.",
            "t_rel_s": 1.0,
        },
        {
            "seq": 1,
            "kind": "call_start",
            "round_index": 1,
            "tool_name": "read_run_file",
            "args": {"path": "evidence/gpu_step_1.log"},
            "detail_kind": "json",
            "t_rel_s": 1.1,
        },
        {
            "seq": 2,
            "kind": "call_result",
            "round_index": 1,
            "ok": True,
            "stdout": "epoch 10 top1 71.84\n",
            "t_rel_s": 1.3,
        },
        {"seq": 3, "kind": "final", "round_index": 1, "content": '{"score": 8}', "t_rel_s": 9.0},
    ]
    return {
        "run": {
            "id": run_id,
            "arxiv_id": "2501.00001",
            "model": "qwen3",
            "tier": "retrain",
            "sweep": "qwen3-retrain",
            "exit_label": "Finished",
            "rounds": 2,
            "tool_calls": 3,
            "budget_h100": 32.0,
            "spent_h100": 2.6833,
            "duration_s": 4900,
            "tokens": {
                "prompt": 52000,
                "completion": 2100,
                "total": 54100,
                "cached": 40000,
                "reasoning": 0,
            },
            "audit": {
                "score": 8,
                "verdict": "reproduced",
                "reproduced": True,
                "flags": [
                    {
                        "kind": "other_provenance_break",
                        "severity": "low",
                        "evidence": "a disclosed one-line patch",
                    }
                ],
                "rationale": "Ran the released training script; top1 71.84 vs 72.0.",
                "has_transcript": True,
            },
            "mode": "reproduced-clean",
            "mode_slug": "reproduced-clean",
            "claim": "Method X reaches 72.0 top-1 on ImageNet-1k.",
            "self_report": "reproduced",
            "target": "top-1 = 72.0 on ImageNet-1k val, point_estimate",
        },
        "events": rows,
        "analysis": {
            "paper_gist": "X trains faster.",
            "target_claim": "72.0 top-1",
            "failure_mode_detail": "none",
            "agent_trajectory_summary": "cloned, trained",
            "evidence_quotes": [{"round": 2, "quote": "epoch 10 top1 71.84"}],
            "self_report": "reproduced",
        },
        "audit_events": audit_rows,
    }


def write_bundle(path: Path, data: dict[str, Any] | None = None) -> Path:
    path.write_bytes(gzip.compress(json.dumps(data or bundle()).encode(), mtime=0))
    return path
