"""The official SDKs (openai, anthropic, google-genai) against `verdict fake-provider`.

Each case is one request through one SDK entry point, plain or streamed
(raw events and the SDK's own stream accumulator), for text, text + tool
calls, tool calls only, 1-character chunks and unicode. The script for the
fake is generated here, one conversation per case, so every answer is known;
a case passes when the SDK parses it into exactly the scripted text and tool
calls. Usage: check.py PATH/TO/verdict  (run.sh sets up the pinned SDKs).
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import anthropic
import openai
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as gtypes

TIMEOUT = 20  # seconds, per request
UNICODE = "héllo wörld — ✓ 日本語 😀 e\u0301 \"quoted\" \\ back\nslash"

WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
}

# name -> (reply text, tool calls [(id, name, arguments)], chunk_chars,
#          finish reason or None for the default)
CONTENTS = {
    "text": ("Hello from the fake provider.", [], None, None),
    "text-1char": (UNICODE, [], 1, None),
    "text+tools": (
        "Let me look that up.",
        [("call_w1", "get_weather", {"city": "Zürich", "days": 3})],
        None,
        None,
    ),
    "tools-only": (
        None,
        [
            ("call_a", "get_weather", {"city": "Oslo"}),
            ("call_b", "get_weather", {"city": "東京", "days": 1}),
        ],
        None,
        None,
    ),
    "text+tools-1char": (
        "Ünïcödé ✓ then a call:",
        [("call_u", "get_weather", {"city": "Saint-Étienne 🏙", "days": 2})],
        1,
        None,
    ),
    "max-tokens": ("This answer was cut sh", [], None, "max_tokens"),
    "error-429": None,  # an HTTP 429 answer: the SDK's rate-limit error
}
USAGE = {"input_tokens": 11, "output_tokens": 7}
ERROR = "slow down (fake)"

# How each API names the finish: (text, tool calls, token limit).
FINISH = {
    "openai-chat": ("stop", "tool_calls", "length"),
    "openai-responses": ("completed", "completed", "incomplete:max_output_tokens"),
    "anthropic": ("end_turn", "tool_use", "max_tokens"),
    "gemini": ("STOP", "STOP", "MAX_TOKENS"),
}


class Case:
    def __init__(self, number, api, mode, content):
        self.key = f"[case {number}]"
        self.api, self.mode, self.content = api, mode, content
        self.name = f"{api} {mode} {content}"

    def prompt(self):
        return f"{self.key} Check the weather please."

    def expected(self):
        """What the SDK must parse: text, calls, finish reason, usage."""
        text, calls, _, finish = CONTENTS[self.content]
        family = "gemini" if self.api.startswith("gemini") else self.api
        names = FINISH[family]
        if finish == "max_tokens":
            finish = names[2]
        else:
            finish = names[1] if calls else names[0]
        if family == "gemini":
            calls = [(None, name, args) for _, name, args in calls]
        return {"text": text, "calls": calls, "finish": finish, "usage": (11, 7)}


APIS = {
    "openai-chat": ["plain", "stream", "stream-helper"],
    "openai-responses": ["plain", "stream", "stream-helper"],
    "anthropic": ["plain", "stream", "stream-helper"],
    "gemini-v1beta": ["plain", "stream"],
    "gemini-v1": ["plain", "stream"],
}


def cases():
    out = []
    for api, modes in APIS.items():
        for mode in modes:
            for content in CONTENTS:
                out.append(Case(len(out) + 1, api, mode, content))
    return out


def script(all_cases):
    conversations = []
    for case in all_cases:
        if CONTENTS[case.content] is None:
            fault = {"kind": "status", "status": 429, "message": ERROR}
            conversations.append(
                {"first_user_contains": case.key, "turns": [{"action": {"fault": fault}}]}
            )
            continue
        text, calls, chunk, finish = CONTENTS[case.content]
        reply = {
            "tool_calls": [
                {"id": cid, "name": name, "arguments": args} for cid, name, args in calls
            ]
        }
        if text is not None:
            reply["text"] = text
        if chunk:
            reply["chunk_chars"] = chunk
        if finish:
            reply["finish_reason"] = finish
        reply["usage"] = USAGE
        conversations.append(
            {"first_user_contains": case.key, "turns": [{"action": {"reply": reply}}]}
        )
    return {"conversations": conversations}


# --- one function per SDK: returns {text, calls, finish, usage} ------------


def result(text, calls, finish, usage):
    return {"text": text, "calls": calls, "finish": finish, "usage": usage}


def chat_result(completion):
    choice = completion.choices[0]
    message = choice.message
    calls = [
        (c.id, c.function.name, json.loads(c.function.arguments))
        for c in message.tool_calls or []
    ]
    usage = completion.usage
    return result(
        message.content,
        calls,
        choice.finish_reason,
        (usage.prompt_tokens, usage.completion_tokens) if usage else None,
    )


def openai_chat(base, case):
    client = openai.OpenAI(api_key="fake", base_url=base, timeout=TIMEOUT, max_retries=0)
    args = dict(
        model="fake-model",
        messages=[{"role": "user", "content": case.prompt()}],
        tools=[{"type": "function", "function": WEATHER}],
        stream_options={"include_usage": True} if case.mode != "plain" else openai.omit,
    )
    if case.mode == "plain":
        return chat_result(client.chat.completions.create(**args))
    if case.mode == "stream":
        text, calls, finish, usage = None, {}, None, None
        for chunk in client.chat.completions.create(stream=True, **args):
            if chunk.usage:
                usage = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
            for choice in chunk.choices:
                if choice.delta.content:
                    text = (text or "") + choice.delta.content
                for c in choice.delta.tool_calls or []:
                    call = calls.setdefault(c.index, {"id": None, "name": "", "args": ""})
                    call["id"] = c.id or call["id"]
                    if c.function and c.function.name:
                        call["name"] += c.function.name
                    if c.function and c.function.arguments:
                        call["args"] += c.function.arguments
                finish = choice.finish_reason or finish
        calls = [(c["id"], c["name"], json.loads(c["args"])) for _, c in sorted(calls.items())]
        return result(text, calls, finish, usage)
    with client.chat.completions.stream(**args) as stream:
        try:
            for _ in stream:
                pass
            return chat_result(stream.get_final_completion())
        except openai.LengthFinishReasonError as e:
            # The helper refuses a turn cut by the token limit (so it does
            # with the real API); the completion it parsed comes with it.
            return chat_result(e.completion)


def responses_result(response):
    text = response.output_text if any(i.type == "message" for i in response.output) else None
    calls = [
        (i.call_id, i.name, json.loads(i.arguments))
        for i in response.output
        if i.type == "function_call"
    ]
    finish = response.status
    if response.incomplete_details:
        finish += f":{response.incomplete_details.reason}"
    usage = (response.usage.input_tokens, response.usage.output_tokens)
    return result(text, calls, finish, usage)


def openai_responses(base, case):
    client = openai.OpenAI(api_key="fake", base_url=base, timeout=TIMEOUT, max_retries=0)
    args = dict(
        model="fake-model",
        input=case.prompt(),
        tools=[dict(type="function", **WEATHER)],
    )
    if case.mode == "plain":
        return responses_result(client.responses.create(**args))
    deltas, final = [], None
    if case.mode == "stream":
        for event in client.responses.create(stream=True, **args):
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response
    else:
        with client.responses.stream(**args) as stream:
            for event in stream:
                if event.type == "response.output_text.delta":
                    deltas.append(event.delta)
                # get_final_response() wants `response.completed`; a turn cut
                # by the token limit ends with `response.incomplete` instead
                # (as the real API does).
                if event.type == "response.incomplete":
                    final = event.response
            final = final or stream.get_final_response()
    parsed = responses_result(final)
    if (("".join(deltas)) if deltas else None) != parsed["text"]:
        raise AssertionError(f"deltas {deltas!r} != final text {parsed['text']!r}")
    return parsed


def anthropic_result(message):
    blocks = message.content
    texts = [b.text for b in blocks if b.type == "text"]
    calls = [(b.id, b.name, b.input) for b in blocks if b.type == "tool_use"]
    usage = (message.usage.input_tokens, message.usage.output_tokens)
    return result(("".join(texts) if texts else None), calls, message.stop_reason, usage)


def anthropic_messages(base, case):
    client = anthropic.Anthropic(
        api_key="fake", base_url=base, timeout=TIMEOUT, max_retries=0
    )
    args = dict(
        model="fake-model",
        max_tokens=256,
        messages=[{"role": "user", "content": case.prompt()}],
        tools=[
            {
                "name": WEATHER["name"],
                "description": WEATHER["description"],
                "input_schema": WEATHER["parameters"],
            }
        ],
    )
    if case.mode == "plain":
        return anthropic_result(client.messages.create(**args))
    if case.mode == "stream":
        blocks, finish, tokens_in, tokens_out = {}, None, None, None
        for event in client.messages.create(stream=True, **args):
            if event.type == "message_start":
                tokens_in = event.message.usage.input_tokens
            elif event.type == "content_block_start":
                block = event.content_block
                blocks[event.index] = {
                    "type": block.type,
                    "text": "",
                    "json": "",
                    "id": getattr(block, "id", None),
                    "name": getattr(block, "name", None),
                }
            elif event.type == "content_block_delta":
                if event.delta.type == "text_delta":
                    blocks[event.index]["text"] += event.delta.text
                elif event.delta.type == "input_json_delta":
                    blocks[event.index]["json"] += event.delta.partial_json
            elif event.type == "message_delta":
                finish = event.delta.stop_reason
                tokens_out = event.usage.output_tokens
        ordered = [b for _, b in sorted(blocks.items())]
        texts = [b["text"] for b in ordered if b["type"] == "text"]
        calls = [
            (b["id"], b["name"], json.loads(b["json"] or "{}"))
            for b in ordered
            if b["type"] == "tool_use"
        ]
        text = "".join(texts) if texts else None
        return result(text, calls, finish, (tokens_in, tokens_out))
    with client.messages.stream(**args) as stream:
        streamed = "".join(stream.text_stream)
        parsed = anthropic_result(stream.get_final_message())
    if (streamed or None) != parsed["text"]:
        raise AssertionError(f"text_stream {streamed!r} != final text {parsed['text']!r}")
    return parsed


def gemini(root, version, case):
    client = genai.Client(
        api_key="fake",
        http_options=gtypes.HttpOptions(
            base_url=root, api_version=version, timeout=TIMEOUT * 1000
        ),
    )
    config = gtypes.GenerateContentConfig(
        tools=[gtypes.Tool(function_declarations=[gtypes.FunctionDeclaration(**WEATHER)])],
        automatic_function_calling=gtypes.AutomaticFunctionCallingConfig(disable=True),
    )
    args = dict(model="fake-model", contents=case.prompt(), config=config)
    if case.mode == "plain":
        responses = [client.models.generate_content(**args)]
    else:
        responses = list(client.models.generate_content_stream(**args))
    texts, calls, finish = [], [], None
    for response in responses:
        candidate = response.candidates[0]
        for part in candidate.content.parts or []:
            if part.text:
                texts.append(part.text)
            if part.function_call:
                calls.append((None, part.function_call.name, dict(part.function_call.args)))
        if candidate.finish_reason:
            finish = candidate.finish_reason.name
    meta = responses[-1].usage_metadata
    usage = (meta.prompt_token_count, meta.candidates_token_count)
    return result(("".join(texts) if texts else None), calls, finish, usage)


def expect_rate_limited(call, case):
    """An HTTP 429 must surface as the SDK's own rate-limit error."""
    try:
        call()
    except (openai.RateLimitError, anthropic.RateLimitError) as e:
        if ERROR not in str(e):
            raise AssertionError(f"message lost: {e}") from e
        return
    except genai_errors.ClientError as e:
        if e.code != 429 or ERROR not in str(e):
            raise AssertionError(f"wrong error: {e}") from e
        return
    raise AssertionError("no error raised")


# --- running ---------------------------------------------------------------


def start_fake(verdict, script_path):
    fake = subprocess.Popen(
        [verdict, "fake-provider", "--script", script_path],
        stdout=subprocess.PIPE,
        text=True,
    )
    urls = {}
    deadline = time.monotonic() + 60
    lines = []

    def read():
        for line in fake.stdout:
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    while len(urls) < 4:
        if time.monotonic() > deadline or fake.poll() is not None:
            fake.kill()
            raise SystemExit(f"sdk-check: the fake provider did not start: {lines}")
        while lines:
            protocol, url = lines.pop(0).split()
            urls[protocol] = url
        time.sleep(0.05)
    return fake, urls


def run_case(case, urls):
    root = urls["Gemini"].rsplit("/", 1)[0] + "/"
    if case.api == "openai-chat":
        return openai_chat(urls["OpenAiChat"], case)
    if case.api == "openai-responses":
        return openai_responses(urls["OpenAiResponses"], case)
    if case.api == "anthropic":
        return anthropic_messages(urls["Anthropic"].rsplit("/v1", 1)[0], case)
    return gemini(root, case.api.split("-")[1], case)


def main():
    verdict = sys.argv[1]
    all_cases = cases()
    with tempfile.TemporaryDirectory() as tmp:
        script_path = os.path.join(tmp, "script.json")
        with open(script_path, "w", encoding="utf-8") as f:
            json.dump(script(all_cases), f, ensure_ascii=False)
        fake, urls = start_fake(verdict, script_path)
        failed = []
        try:
            for case in all_cases:
                try:
                    if CONTENTS[case.content] is None:
                        expect_rate_limited(lambda: run_case(case, urls), case)
                    else:
                        got, expected = run_case(case, urls), case.expected()
                        if got != expected:
                            raise AssertionError(f"got {got!r}, expected {expected!r}")
                    print(f"ok    {case.name}")
                except Exception as e:  # every SDK error is a finding
                    failed.append(case.name)
                    print(f"FAIL  {case.name}: {type(e).__name__}: {e}")
                    if os.environ.get("SDK_CHECK_TRACE"):
                        traceback.print_exc()
        finally:
            fake.send_signal(signal.SIGTERM)
            try:
                fake.wait(timeout=10)
            except subprocess.TimeoutExpired:
                fake.kill()
    versions = ", ".join(
        f"{m.__name__.split('.')[-1]} {m.__version__}" for m in (openai, anthropic, genai)
    )
    print(f"sdk-check ({versions}): {len(all_cases) - len(failed)} of {len(all_cases)} cases ok")
    if failed:
        print("sdk-check: failing cases: " + "; ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
