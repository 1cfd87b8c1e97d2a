"""`pagoda template` renders real chat templates byte-for-byte as transformers does.

Reference: Python's jinja2 (pinned in tools/requirements-test.txt) in the environment that
transformers' `_compile_jinja_template` builds (transformers/utils/chat_template_utils.py,
5.x): ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the
loopcontrols extension and a `generation` tag, its own `tojson` (json.dumps, ensure_ascii=False),
`raise_exception`, `strftime_now`, and the message preparation of apply_chat_template (None
values dropped, reasoning fields aliased, the tokenizer's special tokens passed as kwargs).

Templates: every tokenizer_config.json under the shared tokenizers folder (skipped with a
message when absent) and the documented ones in tests/data/templates/ (see its README). Each
is rendered over a matrix of conversations and flags; when jinja2 raises, pagoda must fail too.
"""
import dataclasses
import datetime
import json
import os
import pathlib
import subprocess

import jinja2
import jinja2.ext
import jinja2.nodes
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATE_DATA = ROOT / "tests" / "data" / "templates"
SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def shared_dir():
    for candidate in (os.environ.get("PAGODA_SHARED"), ROOT.parent / "shared", "/work/shared"):
        if candidate and (pathlib.Path(candidate) / "tokenizers").is_dir():
            return pathlib.Path(candidate)
    return None


# --- the reference: transformers' chat template environment, rebuilt on jinja2 alone ---

class _Generation(jinja2.ext.Extension):
    # transformers' AssistantTracker: {% generation %} renders its body unchanged.
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


class _TemplateNamespace(jinja2.utils.Namespace):
    def __init__(*args, **kwargs):
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _TemplateNamespace._check(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name, value):
        _TemplateNamespace._check(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check(name):
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"underscore-prefixed namespace attribute {name!r}")


class _TemplateDict:
    def __call__(self, *args, **kwargs):
        return dict(*args, **kwargs)


def _raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def reference_env():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[_Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.datetime.now().strftime(fmt)
    env.globals["dict"] = _TemplateDict()
    env.globals["namespace"] = _TemplateNamespace
    return env


def prepare_message(message):
    # apply_chat_template: _normalize_chat_messages, then _alias_reasoning_fields.
    message = {k: v for k, v in message.items() if v is not None}
    reasoning = next((message[k] for k in ("reasoning_content", "thinking", "reasoning")
                      if message.get(k) is not None), None)
    if reasoning is not None:
        message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
    return message


def reference_render(template, config, case):
    kwargs = {k: token_text(config[k]) for k in SPECIAL_TOKENS if config.get(k) is not None}
    kwargs.update(case.kwargs)
    compiled = reference_env().from_string(template)
    return compiled.render(messages=[prepare_message(m) for m in case.messages], tools=case.tools,
                           documents=None, add_generation_prompt=case.add_generation_prompt, **kwargs)


def token_text(token):
    return token["content"] if isinstance(token, dict) else token


# --- the matrix of conversations ---

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Zürich"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}

SYSTEM = {"role": "system", "content": "You are a concise assistant. Answer in one line."}
USER1 = {"role": "user", "content": "  What is 2 + 2? Ünïcödé ok  "}
ASSIST1 = {"role": "assistant", "content": "It is 4."}
USER2 = {"role": "user", "content": "And \"3 + 3\" <in> 'quotes'?\n"}
THINKING_ASSIST = {"role": "assistant", "content": "<think>\nadd them\n</think>\n\nIt is 6."}
REASONING_ASSIST = {"role": "assistant", "content": "It is 6.", "reasoning_content": "3 plus 3"}


def tool_conversation(arguments, content):
    call = {"id": "call00001", "type": "function",
            "function": {"name": "get_weather", "arguments": arguments}}
    return [
        {"role": "user", "content": "Weather in Zürich?"},
        {"role": "assistant", "content": content, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": "{\"temp\": 21.5}"},
        {"role": "assistant", "content": "It is 21.5 °C."},
    ]


CONVERSATIONS = {
    "user": [USER1],
    "system_user": [SYSTEM, USER1],
    "multi_turn": [USER1, ASSIST1, USER2],
    "system_multi_turn": [SYSTEM, USER1, ASSIST1, USER2],
    "thinking_in_content": [USER1, ASSIST1, USER2, THINKING_ASSIST, {"role": "user", "content": "Thanks"}],
    "reasoning_field": [SYSTEM, USER2, REASONING_ASSIST],
    "tools_no_calls": [SYSTEM, USER1],
    "tool_call_dict_args": tool_conversation({"city": "Zürich", "unit": "celsius"}, None),
    "tool_call_string_args": tool_conversation("{\"city\": \"Zürich\"}", ""),
    "consecutive_users": [USER1, USER2],
    "empty": [],
}
WITH_TOOLS = {"tools_no_calls", "tool_call_dict_args", "tool_call_string_args"}


@dataclasses.dataclass
class Case:
    name: str
    messages: list
    tools: list | None
    add_generation_prompt: bool
    kwargs: dict


def cases():
    for conv, messages in CONVERSATIONS.items():
        tools = [WEATHER_TOOL] if conv in WITH_TOOLS else None
        for agp in (False, True):
            for thinking in (None, True, False):
                kwargs = {} if thinking is None else {"enable_thinking": thinking}
                label = f"{conv}-agp{int(agp)}-think{'' if thinking is None else int(thinking)}"
                yield Case(label, messages, tools, agp, kwargs)


def template_sources():
    sources = []
    shared = shared_dir()
    if shared is None:
        sources.append(pytest.param(None, None, id="shared-tokenizers", marks=pytest.mark.skip(
            reason="shared tokenizers folder absent (set PAGODA_SHARED): only tests/data templates run")))
    else:
        for config_path in sorted((shared / "tokenizers").glob("*/tokenizer_config.json")):
            config = json.loads(config_path.read_text(encoding="utf-8"))
            if isinstance(config.get("chat_template"), str):
                sources.append(pytest.param(config_path.parent.name, config, id=config_path.parent.name))
    meta = json.loads((TEMPLATE_DATA / "templates.json").read_text(encoding="utf-8"))
    for name, entry in sorted(meta.items()):
        config = {k: v for k, v in entry.items() if k != "source"}
        config["chat_template"] = (TEMPLATE_DATA / f"{name}.jinja").read_text(encoding="utf-8")
        sources.append(pytest.param(name, config, id=name))
    return sources


@pytest.mark.parametrize("name,config", template_sources())
def test_template_matches_jinja2(pagoda_bin, tmp_path, name, config):
    config_path = tmp_path / "tokenizer_config.json"
    config_path.write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    template = config["chat_template"]
    checked = raised = 0
    for case in cases():
        try:
            expected, error = reference_render(template, config, case), None
        except Exception as e:  # the template raised (or a Python TypeError in it)
            expected, error = None, e
        messages_path = tmp_path / "messages.json"
        messages_path.write_text(json.dumps(case.messages, ensure_ascii=False), encoding="utf-8")
        cmd = [pagoda_bin, "template", config_path, "--messages", messages_path]
        if case.tools is not None:
            tools_path = tmp_path / "tools.json"
            tools_path.write_text(json.dumps(case.tools, ensure_ascii=False), encoding="utf-8")
            cmd += ["--tools", tools_path]
        if case.add_generation_prompt:
            cmd.append("--add-generation-prompt")
        if case.kwargs:
            cmd += ["--kwargs", json.dumps(case.kwargs)]
        result = subprocess.run(cmd, capture_output=True, timeout=30)
        if error is not None:
            assert result.returncode != 0, (
                f"{name}/{case.name}: jinja2 raised {error!r} but pagoda printed {result.stdout.decode()!r}")
            assert b"unexpected" not in result.stderr, result.stderr
            raised += 1
        else:
            assert result.returncode == 0, f"{name}/{case.name}: pagoda failed: {result.stderr.decode()}"
            assert result.stdout.decode("utf-8") == expected, f"{name}/{case.name}"
        checked += 1
    assert checked > 0 and raised < checked, f"{name}: every case raised, nothing compared"


@pytest.mark.parametrize("model", ["smollm2", "gemma3"])
def test_gguf_chat_template(pagoda_bin, tmp_path, model):
    """A GGUF's tokenizer.chat_template (read here with the gguf package) renders as jinja2 does."""
    from gguf import GGUFReader

    from conftest import model_path

    path = model_path(model)
    reader = GGUFReader(path)
    template_field = reader.fields.get("tokenizer.chat_template")
    messages_path = tmp_path / "messages.json"
    case = Case("system_multi_turn", CONVERSATIONS["system_multi_turn"], None, True, {})
    messages_path.write_text(json.dumps(case.messages, ensure_ascii=False), encoding="utf-8")
    result = subprocess.run([pagoda_bin, "template", path, "--messages", messages_path, "--add-generation-prompt"],
                            capture_output=True, timeout=60)
    if template_field is None:
        assert result.returncode != 0 and b"no tokenizer.chat_template" in result.stderr
        return
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    config = {"chat_template": template_field.contents()}
    for key in ("bos", "eos"):
        token_id = reader.fields.get(f"tokenizer.ggml.{key}_token_id")
        if token_id is not None:
            config[f"{key}_token"] = tokens[token_id.contents()]
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode("utf-8") == reference_render(config["chat_template"], config, case)
