"""Small bad inputs are one line and exit 2 before anything runs or is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from replay.models.scripted import ScriptedServer
from replay.models.scripts import Script

from conftest import one_line_exit_2, replay_here
from paths import ROOT
from sweep_scripts import TALLY, fixture_prompts


@pytest.mark.parametrize("rule", ["fraction:2", "fraction:1.01", "fraction:0", "steps:0",
                                  "tokens:0"])
def test_an_out_of_range_boundary_is_refused_before_the_agent_runs(rule: str,
                                                                   tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    with ScriptedServer(Script([{"content": "x"}])) as server:
        done = replay_here("collect", "--model", f"openai:agent@{server.base_url}",
                          "--instance", TALLY, "--boundary", rule, "--store", str(store))
        assert server.count == 0
    one_line_exit_2(done, f"bad boundary rule '{rule}'")
    assert not store.exists()


def test_an_out_of_range_history_rule_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    done = replay_here("cell", "--instance", TALLY, "--arm", "pre", "--agent-model",
                      "openai:agent@http://127.0.0.1:9/v1", "--history-rule", "fraction:2",
                      "--store", str(store))
    one_line_exit_2(done, "bad boundary rule 'fraction:2'")
    assert not store.exists()


@pytest.mark.parametrize("command", [
    ["backbone", "--agent-model", "openai:a@http://127.0.0.1:9/v1", "--model",
     "openai:s@http://127.0.0.1:9/v1"],
    ["cell", "--instance", TALLY, "--arm", "pre", "--agent-model",
     "openai:a@http://127.0.0.1:9/v1"],
    ["collect", "--model", "openai:a@http://127.0.0.1:9/v1", "--boundary", "steps:1"],
    ["validate", "--instance", TALLY],
], ids=lambda command: command[0])
def test_a_repo_mirror_that_is_not_a_folder_is_refused(command: list[str],
                                                       tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    missing = tmp_path / "no-such-folder"
    done = replay_here(*command, "--repo-mirror", str(missing), "--store", str(store))
    one_line_exit_2(done, f"--repo-mirror {missing} does not exist")
    a_file = tmp_path / "mirrors.txt"
    a_file.write_text("not a folder")
    done = replay_here(*command, "--repo-mirror", str(a_file), "--store", str(store))
    one_line_exit_2(done, f"--repo-mirror {a_file} is not a folder")
    done = replay_here(*command, "--store", str(store), env={"REPLAY_REPO_MIRRORS": str(missing)})
    one_line_exit_2(done, f"REPLAY_REPO_MIRRORS {missing} does not exist")
    assert not store.exists()


@pytest.mark.parametrize("command", [["report"], ["confirm"], ["confirm", "--dry-run"]])
def test_report_and_confirm_on_a_missing_store_create_nothing(command: list[str],
                                                              tmp_path: Path) -> None:
    store = tmp_path / "runs" / "replay.db"
    done = replay_here(*command, "--store", str(store))
    one_line_exit_2(done, f"no store at {store}")
    assert not store.exists() and not store.parent.exists()


GONE = "openai:a@http://127.0.0.1:9/v1"


@pytest.mark.parametrize("command", [
    ["cell", "--arm", "pre", "--agent-model", GONE],
    ["backbone", "--agent-model", GONE, "--model", GONE],
    ["collect", "--model", GONE, "--boundary", "steps:1"],
    ["validate"],
], ids=lambda command: command[0])
def test_markup_in_an_instance_id_is_shown_as_it_is(command: list[str], tmp_path: Path) -> None:
    """Issue 16: `--instance '[/x]'` ended in a rich MarkupError traceback."""
    store = tmp_path / "replay.db"
    done = replay_here(*command, "--instance", "[/x]", "--store", str(store))
    one_line_exit_2(done, "unknown instance id: [/x]")
    assert not store.exists()


def test_the_model_spec_hint_keeps_its_brackets(tmp_path: Path) -> None:
    done = replay_here("cell", "--instance", TALLY, "--arm", "pre", "--agent-model", "gpt-4.2",
                      "--store", str(tmp_path / "replay.db"))
    one_line_exit_2(done, "unknown model 'gpt-4.2'")
    assert "PROVIDER:MODEL[@BASE_URL][#KEY_ENV][?SETTING=VALUE&...]" in done.stderr
    usage = replay_here("cell", "--help")
    assert "PROVIDER:MODEL[@URL][#KEY_ENV][?SETTINGS]" in " ".join(usage.stdout.split())


UNSAFE_RUNS = ["../x", "/tmp/replay-absolute-run", "a/b", ".hidden", "run:1", "a b", "x" * 201]


@pytest.mark.parametrize("name", UNSAFE_RUNS)
def test_an_unsafe_run_name_is_refused_before_anything_is_written(name: str,
                                                                  tmp_path: Path) -> None:
    """Issue 21: `--run ../x` or an absolute `--run` wrote the exports there."""
    store = tmp_path / "runs" / "replay.db"
    for command in (["backbone", "--agent-model", GONE, "--model", GONE, "--instance", TALLY,
                     "--run", name, "--store", str(store)],
                    ["report", name, "--store", str(store)],
                    ["confirm", name, "--dry-run", "--store", str(store)]):
        done = replay_here(*command)
        one_line_exit_2(done, f"bad run name {name!r}: it names files and folders")
    assert not tmp_path.joinpath("runs").exists() and not Path(UNSAFE_RUNS[1]).exists()


@pytest.mark.parametrize("command", [
    ["cell", "--instance", TALLY, "--arm", "pre", "--agent-model", GONE],
    ["backbone", "--agent-model", GONE, "--model", GONE, "--instance", TALLY],
], ids=lambda command: command[0])
def test_a_history_id_that_is_not_hexadecimal_is_refused(command: list[str],
                                                         tmp_path: Path) -> None:
    store = tmp_path / "replay.db"
    done = replay_here(*command, "--history", "../x", "--store", str(store))
    one_line_exit_2(done, "bad history id '../x'")
    assert not store.exists()


def test_paths_computed_from_ids_stay_under_their_root(tmp_path: Path) -> None:
    """The guard behind the checks at entry: a computed path never leaves its folder."""
    from replay.core.errors import InputError
    from replay.core.paths import within
    from replay.report.exports import reports_folder
    from replay.store import Store, validations

    assert within(tmp_path, "a", "b.log") == tmp_path / "a" / "b.log"
    for parts in (("..", "x"), ("validate", "../../x"), ("/etc/passwd",)):
        with pytest.raises(InputError, match="leads out of"):
            within(tmp_path, *parts)
    with Store.open(tmp_path / "replay.db") as store:
        kept = validations.test_log(store, TALLY, "gold.log")("log")
        assert Path(kept) == tmp_path / "artifacts" / "validate" / TALLY / "gold.log"
        with pytest.raises(InputError, match="leads out of"):
            validations.test_log(store, "../../x", "gold.log")
        with pytest.raises(InputError, match="leads out of"):
            reports_folder(store, "../x")


@pytest.mark.parametrize("spec, message", [
    ("openai:m@127.0.0.1:8000/v1#REPLAY_TEST_MODEL_KEY", "'127.0.0.1:8000/v1' after '@' looks "
     "like a base URL without a well-formed http:// or https://; write @http://127.0.0.1:8000/v1"),
    ("openai:m@localhost:8000/v1", "'localhost:8000/v1' after '@' looks like a base URL"),
    ("anthropic:m@http:/127.0.0.1:8000", "'http:/127.0.0.1:8000' after '@' looks like a base "
                                         "URL without a well-formed"),
    ("openai:m@htp://127.0.0.1:8000/v1", "not an ad-hoc model spec"),
    ("openai:gpt-4o@", "nothing after '@'"),
    ("openai:m@http:///v1", "model 'openai:m@http:///v1': setting base_url"),
])
def test_a_spec_that_would_reach_a_public_endpoint_by_a_typo_is_refused(
        spec: str, message: str, tmp_path: Path) -> None:
    """Issue 21: `openai:m@127.0.0.1:8000/v1#KEY` went to api.openai.com with that key."""
    store = tmp_path / "replay.db"
    done = replay_here("cell", "--instance", TALLY, "--arm", "pre", "--agent-model", spec,
                      "--store", str(store), env={"REPLAY_TEST_MODEL_KEY": "sk-not-sent"})
    one_line_exit_2(done, f"model {spec!r}: " if "ad-hoc" not in message else message)
    assert message in done.stderr, done.stderr
    assert not store.exists()


def test_model_names_with_an_at_version_still_resolve() -> None:
    from replay.models.registry import resolve

    spec = resolve("anthropic:claude-opus-4-1@20250805")
    assert (spec.model, spec.base_url) == ("claude-opus-4-1@20250805",
                                           "https://api.anthropic.com/v1")
    local = resolve("openai:m@http://127.0.0.1:8000/v1#REPLAY_TEST_MODEL_KEY")
    assert (local.model, local.base_url, local.key_env) == (
        "m", "http://127.0.0.1:8000/v1", "REPLAY_TEST_MODEL_KEY")


def test_a_sweep_whose_validations_all_failed_exits_1_and_counts_them(tmp_path: Path) -> None:
    """Issue 21: a grid of `E` from harness faults in validation said "0 errors", exit 0."""
    recipes = tmp_path / "environments"
    recipes.mkdir()
    bundled = ROOT / "environments" / "replay-demo.toml"
    text = bundled.read_text()
    assert '\ninstall = ""\n' in text
    (recipes / "replay-demo.toml").write_text(
        text.replace('\ninstall = ""\n', '\ninstall = "echo broken install; exit 1"\n', 1))
    store = tmp_path / "replay.db"
    done = replay_here("backbone", "--agent-model", GONE, "--model", GONE, "--instance", TALLY,
                      "--prompt-sources", str(fixture_prompts(tmp_path)), "--store", str(store),
                      env={"REPLAY_ENVIRONMENTS": str(recipes)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 cell(s) finished: 0 run, 0 kept from the store, 1 error(s)" in done.stdout
    assert "1 validation(s) ended in a harness fault, so their 2 cell(s) did not run" \
        in done.stdout
    assert f"error validating {TALLY}: harness fault: environment install step failed" \
        in done.stdout
