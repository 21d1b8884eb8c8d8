"""The embedded GGUF model (SmolLM2-135M through llama.cpp in process), for real: tool calls,
a summary, a refused overflow, seeds. Each test loads the model with a 2,048-token context
(about a second) and keeps its requests short, so the file runs in seconds."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import gguf
import pytest

from replay.agent.tools import TOOL_NAMES, TOOLS
from replay.compaction.sources import PromptText
from replay.compaction.summarize import parse_summarizer, summarize
from replay.core.errors import InputError
from replay.models.cache import CallCache
from replay.models.client import ModelClient
from replay.models.gguf import loaded, model_file, weights_file
from replay.models.openai import request_body
from replay.models.registry import parse_adhoc, parse_gguf, resolve
from replay.models.transport import ModelRefused
from replay.models.types import ChatRequest, ModelSpec

from conftest import run_replay
from sweep_scripts import fixture_prompts

TASK = [{"role": "system", "content": "You fix bugs in /testbed. Call a tool in every reply."},
        {"role": "user", "content": "The test tests/test_area.py fails. Look at the files."}]


@pytest.fixture(scope="module")
def spec() -> ModelSpec:
    return resolve("smollm2").model_copy(update={"context_window": 2048})


@pytest.fixture
def client(spec: ModelSpec, tmp_path: Path):
    with CallCache(tmp_path / "calls.db") as cache, ModelClient(spec, cache) as made:
        yield made


def test_the_agent_gets_real_tool_calls(client: ModelClient) -> None:
    reply = client.complete(ChatRequest(messages=TASK, tools=TOOLS, temperature=0))
    calls = reply.message["tool_calls"]
    assert len(calls) == 1 and calls[0]["function"]["name"] in TOOL_NAMES
    assert isinstance(json.loads(calls[0]["function"]["arguments"]), dict)
    assert reply.message["content"] == ""
    assert reply.usage.input_tokens > 300  # the tools' signatures are in the prompt
    # the call answered, its result goes back as the template renders it: the next step works
    follow = [*TASK, reply.message, {"role": "tool", "tool_call_id": calls[0]["id"],
                                     "content": "shapes/area.py\ntests/test_area.py"}]
    again = client.complete(ChatRequest(messages=follow, tools=TOOLS, temperature=0))
    assert again.message["tool_calls"][0]["function"]["name"] in TOOL_NAMES
    assert again.usage.cached_tokens >= reply.usage.input_tokens - 1  # the prefix cache
    assert client.complete(ChatRequest(messages=TASK, tools=TOOLS, temperature=0)) == \
        reply.model_copy(update={"from_cache": True})
    assert client.stats.calls == 2 and client.stats.cache_hits == 1


def test_a_summary_is_text_and_a_cut_off_one_is_marked(client: ModelClient,
                                                       spec: ModelSpec) -> None:
    """Issue 25: 10 of 18 SmolLM2 summaries stopped at the length limit, unmarked."""
    prompt = PromptText(name="codex", agent="codex", registry="npm", package="codex",
                        version="0", digest="", synced_at="",
                        parts={"user": "Summarize the work so far for a handoff."})
    history = [*TASK, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "shapes\ntests"}]
    found = {}
    for cap in (96, 4):
        capped = spec.model_copy(update={"max_tokens": cap})
        with CallCache(Path(client.cache.path).with_name(f"{cap}.db")) as cache, \
                ModelClient(capped, cache) as short:
            found[cap] = summarize(history, parse_summarizer("smollm2:codex"), prompt, short,
                                   temperature=0)
    summary, cut = found[96], found[4]
    assert summary.text.strip() and 0 < summary.output_tokens <= 96
    assert summary.details.get("truncated", False) == (summary.output_tokens == 96)
    assert cut.output_tokens == 4 and cut.details["truncated"] is True


def test_a_prompt_longer_than_the_context_is_refused_and_kept(client: ModelClient) -> None:
    long = [{"role": "user", "content": "word " * 3000}]
    with pytest.raises(ModelRefused) as refused:
        client.complete(ChatRequest(messages=long))
    assert refused.value.context and "2048" in str(refused.value)
    with pytest.raises(ModelRefused):  # kept: refused again at another seed, not sent
        client.complete(ChatRequest(messages=long), seed_index=1)
    assert client.stats.calls == 0 and client.stats.refusals == 2


def test_seeds_differ_at_temperature_1_and_temperature_0_repeats(client: ModelClient) -> None:
    ask = [{"role": "user", "content": "Write one sentence about rivers."}]
    hot = ChatRequest(messages=ask, temperature=1.0, max_tokens=24)
    first, second = (client.complete(hot, seed_index=i).message["content"] for i in (1, 2))
    assert first != second
    provider = client._get_provider()
    cold = ChatRequest(messages=ask, temperature=0, max_tokens=24, seed=0)
    provider.complete(cold, timeout=60)  # the prompt now sits in the slot's cache
    texts = {provider.complete(cold.model_copy(update={"seed": s}), timeout=60).message[
        "content"] for s in (3, 4)}
    assert len(texts) == 1


def test_a_continuation_on_the_demo_suite_makes_real_tool_calls(tmp_path: Path) -> None:
    """The whole engine with the embedded model as the agent: a POST from a short summary on a
    demo instance, two steps, graded. Whatever the model does, its tool calls ran."""
    store = tmp_path / "replay.db"
    done = run_replay("cell", "--instance", "replay-demo__iniconf-1", "--arm", "post",
                      "--summarizer", "tail:200", "--agent-model", "smollm2", "--steps", "2",
                      "--store", str(store))
    assert done.returncode in (0, 1), done.stdout + done.stderr
    actions = re.search(r"actions (\d+), exit (\w+)", done.stdout)
    assert actions and int(actions[1]) >= 1, done.stdout
    assert actions[2] in ("finished", "step_limit")


def test_tool_call_messages_go_with_empty_content_to_a_real_llama_cpp_server(
        spec: ModelSpec, tmp_path: Path) -> None:
    """Issue 25: `content: null` beside tool calls went back as null, and llama-cpp-python's
    server answered HTTP 500 to it. The embedded model's own llama.cpp server listens on
    loopback: the OpenAI provider talks to it over HTTP."""
    address = loaded(spec).listening_address
    remote = parse_adhoc(f"openai:smollm2@{address}/v1?max_tokens=8")
    history = [*TASK, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "shapes\ntests"}]
    request = ChatRequest(messages=history, tools=TOOLS, max_tokens=8)
    assert request_body(remote, request)["messages"][2]["content"] == ""
    with CallCache(tmp_path / "calls.db") as cache, ModelClient(remote, cache) as client:
        reply = client.complete(request)
    assert reply.usage.input_tokens > 300 and reply.usage.output_tokens >= 1


def test_a_template_that_drops_tool_results_is_warned_about(
        spec: ModelSpec, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 25: a chat template dropped a summary request's tool messages (9,147 prompt tokens
    counted for a 23,320-token history) and nothing warned."""
    template = tmp_path / "drops-tools.jinja"
    template.write_text("{% for m in messages %}{% if m.role != 'tool' %}<|im_start|>{{ m.role }}"
                        "\n{{ m.content }}<|im_end|>\n{% endif %}{% endfor %}"
                        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    lossy = spec.model_copy(update={"chat_template": str(template), "tool_choice": None,
                                    "max_tokens": 4})
    output = "\n".join(f"line {n}: value = compute({n}, {n * 7})" for n in range(120))
    history = [*TASK, {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "bash", "arguments": '{"command": "cat log"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": output}]
    with CallCache(tmp_path / "calls.db") as cache, ModelClient(lossy, cache) as client, \
            caplog.at_level(logging.WARNING, logger="replay.models.client"):
        client.complete(ChatRequest(messages=history))
    assert "probably drops messages" in caplog.text and "smollm2" in caplog.text


def test_the_dry_run_warns_of_requests_longer_than_a_context_window(tmp_path: Path) -> None:
    """Issue 25: the dry run never said that tally-1's history (9,177 tokens) exceeds SmolLM2's
    8,192; the default job leaves it out and says so."""
    store = str(tmp_path / "replay.db")
    prompts = ("--prompt-sources", str(fixture_prompts(tmp_path)))  # nothing fetched
    named = run_replay("backbone", "--dry-run", "--instance", "replay-demo__tally-1",
                       "--store", store, *prompts)
    assert named.returncode == 0, named.stdout + named.stderr
    assert ("warning: replay-demo__tally-1's history (about 9,368 tokens) exceeds the agent "
            "smollm2's context window of 8,192: its PRE cells will be refused") in named.stdout
    assert "smollm2:claude-code's summary request for replay-demo__tally-1 (about 9," \
        in named.stdout
    assert "cost at most $0.00\n" in named.stdout  # in process: nothing unpriced
    default = run_replay("backbone", "--dry-run", "--store", store, *prompts)
    assert default.returncode == 0, default.stdout + default.stderr
    assert default.stdout.startswith("left out replay-demo__tally-1: its history (about 9,368 "
                                     "tokens) does not fit smollm2's context of 8,192")
    assert "instances   2: replay-demo__stockroom-1, replay-demo__iniconf-1" in default.stdout
    assert "warning:" not in default.stdout


def test_a_missing_key_for_a_named_model_is_still_one_line(tmp_path: Path) -> None:
    done = run_replay("backbone", "--model", "kimi-k2", "--store", str(tmp_path / "r.db"),
                      env={"MOONSHOT_API_KEY": ""})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: model 'kimi-k2' needs an API key: set MOONSHOT_API_KEY"]


def test_the_embedded_model_runs_widened_to_q8_0_made_once(spec: ModelSpec) -> None:
    """llama.cpp's fast CPU kernels take Q8_0, not the shipped file's Q4_1: the file it loads
    is a Q8_0 copy, made at the first load and reused after, with the same tensors."""
    shipped, loaded_file = gguf.GGUFReader(model_file(spec)), weights_file(spec)
    made = loaded_file.stat().st_mtime_ns
    wide = gguf.GGUFReader(loaded_file)
    kinds = {tensor.name: tensor.tensor_type.name for tensor in wide.tensors}
    assert "Q4_1" not in kinds.values() and list(kinds.values()).count("Q8_0") == 211
    assert sorted(kinds) == sorted(tensor.name for tensor in shipped.tensors)
    assert wide.fields["tokenizer.ggml.tokens"].contents()[:50] == \
        shipped.fields["tokenizer.ggml.tokens"].contents()[:50]
    assert weights_file(spec) == loaded_file and loaded_file.stat().st_mtime_ns == made
    assert spec.base_url == "gguf://SmolLM2-135M-Instruct.Q4_1.gguf?n_ctx=8192&widen=q8_0"


def test_a_widening_replay_cannot_do_is_one_line(tmp_path: Path) -> None:
    """Only Q4_1 to Q8_0 is made; another target is bad input, named with its field."""
    with pytest.raises(InputError, match=r"widen: Input should be 'q8_0'"):
        parse_gguf(f"gguf:{tmp_path / 'm.gguf'}?widen=q4_0")
    text = tmp_path / "not.gguf"
    text.write_text("not a model")
    with pytest.raises(InputError, match="not a GGUF file"):
        weights_file(parse_gguf(f"gguf:{text}?widen=q8_0"))
