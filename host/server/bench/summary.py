"""One line of oha's JSON result: answers, requests/s and the
p50/p99/p99.9 latency. Usage: oha ... --output-format json | summary.py LABEL"""
import json
import sys

result = json.load(sys.stdin)
summary, pct = result["summary"], result["latencyPercentiles"]
codes = result.get("statusCodeDistribution", {})
if pct.get("p50") is None:
    sys.exit("{}: no answer ({})".format(sys.argv[1], result.get("errorDistribution")))
line = "{:<14} {:>7} answers  {:>9.0f} req/s  p50 {:.3f} ms  p99 {:.3f} ms  p99.9 {:.3f} ms".format(
    sys.argv[1],
    sum(codes.values()),
    summary["requestsPerSec"],
    pct["p50"] * 1e3,
    pct["p99"] * 1e3,
    pct["p99.9"] * 1e3,
)
if set(codes) - {"200"}:
    line += "  statuses {}".format(codes) if set(codes) != {"400"} else ""
errors = result.get("errorDistribution", {})
if errors:
    line += "  errors {}".format(errors)
print(line)
