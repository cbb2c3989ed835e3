"""scripts/glm_boards.py: the GLM boards' summary (best agents, ratios, the issue's targets met or missed) follows
from the final-regret table; its command line's errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import load_script

glm = load_script("glm_boards")


def _final(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    return pd.DataFrame([dict(env=env, horizon=1024, agent=agent, privacy_model=model, epsilon=eps, mean=mean)
                         for env, agent, model, eps, mean in rows])


def test_a_board_row_names_the_best_agents_and_checks_the_targets():
    inf = np.inf
    final = _final([
        ("glm-x-s6", "uniform", "none", inf, 1000.0), ("glm-x-s6", "glm-ucb-practical", "none", inf, 20.0),
        ("glm-x-s6", "elim-ucb", "none", inf, 40.0),
        ("glm-x-s6", "elim-jdp-pooled", "jdp", 1.0, 90.0), ("glm-x-s6", "elim-glm-jdp-pooled", "jdp", 1.0, 50.0),
        ("glm-x-s6", "elim-glm-jdp-pooled", "jdp", 0.3, 5.0),           # another epsilon: not this row
        ("glm-x-s6", "ldp-glm-sgd", "ldp", 1.0, 600.0), ("glm-x-s6", "elim-ldp-pooled", "ldp", 1.0, 400.0),
        ("lin-y", "uniform", "none", inf, 1.0),                         # not a GLM board
    ])
    rows = glm.board_rows(final).set_index("privacy")
    assert list(rows.index) == ["jdp, eps=1", "ldp, eps=1"]
    jdp, ldp = rows.loc["jdp, eps=1"], rows.loc["ldp, eps=1"]
    assert jdp["best non-private"] == "glm-ucb-practical 20" and jdp["best private"] == "elim-glm-jdp-pooled 50"
    assert jdp["/ uniform"] == "0.05 (met: <= 0.1)" and jdp["/ best non-private"] == "2.5 (met: <= 3)"
    assert jdp["best private GLM agent / best private linear"] == "elim-glm-jdp-pooled / elim-jdp-pooled = 0.5556"
    assert ldp["best private"] == "elim-ldp-pooled 400" and ldp["/ uniform"] == "0.4 (met: <= 0.5)"
    assert ldp["/ best non-private"] == "20"                            # no target for local DP
    assert ldp["best private GLM agent / best private linear"] == "ldp-glm-sgd / elim-ldp-pooled = 1.5"
    worse = final.assign(mean=np.where(final["agent"] == "elim-glm-jdp-pooled", 150.0, final["mean"]))
    assert glm.board_rows(worse).set_index("privacy").loc["jdp, eps=1", "/ uniform"] == "0.09 (met: <= 0.1)"
    assert "missed" in glm.board_rows(worse).set_index("privacy").loc["jdp, eps=1", "/ best non-private"]


def test_the_command_line_refuses_a_folder_without_results(tmp_path):
    with pytest.raises(SystemExit) as exc:
        glm.main([str(tmp_path)])
    assert exc.value.code == 2
