"""The client against a real `verdict serve`: verdicts, progress keys,
records, and refusals as exceptions carrying the server's `code`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ALPHA, BETA
from verdict import (
    ApiError,
    BinaryBackend,
    CheckerError,
    Client,
    Observation,
    TransportError,
    build_packet,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "packets"


def example(name: str) -> dict:
    return json.loads((EXAMPLES / name).read_text())


def test_a_served_check_is_complete_or_not(served):
    alpha = Client(served.base, ALPHA, tenant="alpha")
    done = alpha.check(example("ready.json"))
    assert done.complete and done.status == "complete"
    assert done.reason == "artifact A42 is ready"
    assert done.tenant == "alpha" and len(done.verifier_digest) == 64
    assert done.check_id and done.wit_version

    premature = alpha.check(example("premature.json"))
    assert not premature.complete and premature.status == "not_complete"
    assert premature.feedback == "Read and verify artifact A42 before finishing."
    assert premature.reason == "no successful read_artifact call"

    # beta's A42 is not ready: the same packet is refused there.
    beta = Client(f"{served.base}/v1/tenants/beta", BETA)
    refused = beta.check(example("ready.json"))
    assert refused.status == "not_complete"
    assert refused.reason == "artifact A42 is not ready"


def test_built_packets_are_accepted_and_judged(served):
    alpha = Client(served.base, ALPHA, tenant="alpha")
    read = Observation.succeeded("read_artifact", "call-1", "read")
    assert alpha.check(build_packet("py-1", "A42 is ready.", [read], 2)).complete
    failed = Observation.failed("read_artifact", "call-1", "read")
    assert not alpha.check(build_packet("py-1", "A42 is ready.", [failed])).complete

    # Past the bounds the builder cuts, and the server accepts what it built.
    many = [Observation.succeeded("noop", f"c{i}") for i in range(150)] + [read]
    packet = build_packet("py-2", "x" * 40_000, many)
    assert len(packet["observations"]) == 100 and packet["observationsTruncated"]
    assert packet["observedToolCalls"] == 151 and packet["outputTruncated"]
    assert alpha.check(packet).complete


def test_progress_keys(served):
    beta = Client(served.base, BETA, tenant="beta")
    key = beta.progress(example("premature.json"))
    assert isinstance(key, str) and key
    assert beta.progress(example("ready.json")) == key  # the artifact did not change
    (served.root / "beta" / "A42").write_text('{"id":"A42","ready":false,"rev":2}')
    assert beta.progress(example("ready.json")) != key


def test_a_check_record_is_read_back(served):
    alpha = Client(served.base, ALPHA, tenant="alpha")
    packet = example("ready.json")
    result = alpha.check(packet)
    record = alpha.record(result.check_id)
    assert record["format"] == "verdict.check-record/1"
    assert record["id"] == result.check_id and record["tenant"] == "alpha"
    assert record["packet"]["executionId"] == packet["executionId"]
    assert record["answer"]["kind"] == "verdict"
    with pytest.raises(ApiError) as missing:
        alpha.record("0" * len(result.check_id))
    assert missing.value.status == 404


def test_refusals_carry_the_servers_code(served):
    wrong = Client(served.base, "not-a-token-of-anyone-here-0000000", tenant="alpha")
    with pytest.raises(ApiError) as e:
        wrong.check(example("ready.json"))
    assert (e.value.status, e.value.code) == (401, "unauthorized")

    with pytest.raises(ApiError) as e:
        Client(served.base, ALPHA, tenant="gamma").check(example("ready.json"))
    assert (e.value.status, e.value.code) == (404, "tenant_not_found")

    # alpha has no progress verifier.
    with pytest.raises(ApiError) as e:
        Client(served.base, ALPHA, tenant="alpha").progress(example("ready.json"))
    assert (e.value.status, e.value.code) == (404, "verifier_not_found")

    with pytest.raises(ApiError) as e:
        Client(served.base, ALPHA, tenant="alpha").check({"executionId": "x"})
    assert (e.value.status, e.value.code) == (400, "invalid_packet")

    with pytest.raises(TransportError) as e:
        Client("http://127.0.0.1:9", ALPHA, tenant="alpha", timeout=5).check(example("ready.json"))
    assert e.value.code == "unreachable"


def test_the_binary_backend_agrees_with_the_server(served, verdict_bin):
    local = BinaryBackend(
        "builtin:artifact-ready", artifacts=served.root / "alpha", binary=verdict_bin
    )
    remote = Client(served.base, ALPHA, tenant="alpha")
    for name in ("ready.json", "premature.json"):
        here, there = local.check(example(name)), remote.check(example(name))
        assert (here.status, here.verdict) == (there.status, there.verdict), name
        assert here.verifier_digest == there.verifier_digest
        assert here.check_id is None and there.check_id


def test_a_verifier_failure_is_a_checker_error(verdict_bin, tmp_path):
    # The packet is fine; the verifier traps on its fuel budget.
    backend = BinaryBackend(
        "builtin:artifact-ready", binary=verdict_bin, extra_args=["--fuel", "1"]
    )
    with pytest.raises(CheckerError) as e:
        backend.check(example("ready.json"))
    assert e.value.code and e.value.result.status == "checker_error"


def test_the_package_is_the_installed_one():
    import verdict

    # Installed into the venv's site-packages, not imported from python/src.
    assert "site-packages" in Path(verdict.__file__).parts, verdict.__file__
    assert verdict.__version__ == "0.1.0"
