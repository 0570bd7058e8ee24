"""Traces of a known shape, written by the real OpenTelemetry Python SDK in the OTLP JSON
encoding that the OpenTelemetry Collector's file exporter writes (tests/cli/otlp_sdk.rs).

Reads a JSON shape on stdin and writes the trace file named by argv[1]:

    {"t0_ns": N, "duration_s": S, "seed": K, "batch": B, "service": "gateway",
     "routes": [{"route": "/checkout", "rate": R, "internal": bool,
                 "calls": [{"peer_service": "inventory" | null,
                            "server_address": "inventory.internal",
                            "median_ms": M, "sigma": G, "error_share": P,
                            "optional": bool} | [call, call, ...]]}]}

Route r's requests start at t0 + k / R seconds for k = 0, 1, ... while below S: one SERVER
span each (name "GET <route>", `http.route`), under it (through an INTERNAL span when
`internal`) one CLIENT span per call, back to back, whose duration is drawn log-normal with
median M ms and sigma G, and whose status is ERROR with probability P (seeded
`random.Random(K)`, so the file is the same on every run). An item of `calls` that is a list
is a parallel group: its calls start together and the next item starts when the slowest has
ended. A call's ERROR fails the request (its SERVER span's status is ERROR) unless the call
is `optional`, whose failure the request answers around. The SDK makes the spans (virtual
clock through explicit start and end times, span and trace ids from a counter); its OTLP
encoder (`opentelemetry-exporter-otlp-proto-common`'s `encode_spans`) turns each batch of B
spans into an `ExportTraceServiceRequest`, and protobuf's `MessageToDict` gives its proto3
JSON form, adjusted to OTLP/JSON as the Collector writes it (OTLP specification,
"JSON Protobuf Encoding"): trace and span ids as hex, not base64; enums as integers. One
request a line (the file exporter's `format: json`).
"""

import base64
import json
import random
import sys

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode


class CountingIds(IdGenerator):
    """Ids from a counter: the same file on every run."""

    def __init__(self):
        self.n = 0

    def generate_span_id(self):
        self.n += 1
        return self.n

    def generate_trace_id(self):
        self.n += 1
        return (0xABC << 64) | self.n


def hex_ids(node):
    """proto3 JSON writes bytes as base64; OTLP/JSON writes trace and span ids as hex."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                hex_ids(value)
    elif isinstance(node, list):
        for value in node:
            hex_ids(value)


def main():
    shape = json.load(sys.stdin)
    rng = random.Random(shape["seed"])
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": shape["service"], "service.instance.id": "otel_trace"}), id_generator=CountingIds()
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("brownout.otel_trace", "1")
    t0 = shape["t0_ns"]
    end_ns = t0 + int(shape["duration_s"] * 1e9)
    starts = []
    for route in shape["routes"]:
        k = 0
        while True:
            t = t0 + round(k * 1e9 / route["rate"])
            if t >= end_ns:
                break
            starts.append((t, route))
            k += 1
    starts.sort(key=lambda x: (x[0], x[1]["route"]))
    for t, route in starts:
        server = tracer.start_span(
            "GET " + route["route"],
            kind=SpanKind.SERVER,
            start_time=t,
            attributes={"http.route": route["route"], "http.request.method": "GET"},
        )
        parent = server
        inner = None
        now = t + 100_000
        if route.get("internal"):
            inner = tracer.start_span(
                "handle", context=trace.set_span_in_context(server), kind=SpanKind.INTERNAL, start_time=now
            )
            parent = inner
        failed = False
        for item in route["calls"]:
            group = item if isinstance(item, list) else [item]
            done = now
            for call in group:
                attrs = {"server.address": call["server_address"]}
                if call.get("peer_service"):
                    attrs["peer.service"] = call["peer_service"]
                span = tracer.start_span(
                    "GET", context=trace.set_span_in_context(parent), kind=SpanKind.CLIENT, start_time=now, attributes=attrs
                )
                duration = round(rng.lognormvariate(0.0, call["sigma"]) * call["median_ms"] * 1e6)
                if rng.random() < call["error_share"]:
                    span.set_status(Status(StatusCode.ERROR, "upstream error"))
                    failed = failed or not call.get("optional")
                span.end(end_time=now + duration)
                done = max(done, now + duration)
            now = done
        if inner is not None:
            inner.end(end_time=now)
        if failed:
            server.set_status(Status(StatusCode.ERROR, "a required call failed"))
        server.end(end_time=now + 100_000)
    spans = exporter.get_finished_spans()
    batch = shape["batch"]
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        for i in range(0, len(spans), batch):
            doc = MessageToDict(encode_spans(spans[i : i + batch]), use_integers_for_enums=True)
            hex_ids(doc)
            out.write(json.dumps(doc, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
