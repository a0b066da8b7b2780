"""The user's side of a deployment: a device's report as bytes, and the wire format servers check.

* :func:`report` -- what one device runs: ``report(plan, value, user=i) ->
  bytes``, with all its randomness from the operating system's CSPRNG (no
  seed argument) and the public hash seeds drawn separately from the
  private coins;
* :func:`report_many` -- the same for many simulated devices at once;
* both refuse, before any work, a plan above the device's ceiling on epsilon
  (:data:`DEFAULT_MAX_EPSILON`, set by the device's owner with ``max_epsilon=``),
  a plan they cannot check, and FLH pools beyond ``max_pool_size``
  (:data:`DEFAULT_MAX_POOL_SIZE`);
* :mod:`~ldp.client.wire` -- the versioned wire format (:data:`VERSION`):
  :func:`plan_id`, :func:`encode_reports` (any oracle reports to bytes),
  :func:`encode_protocol_reports`, :func:`parse_reports` (the server's
  per-report checks, vectorised).

The server side is :meth:`ldp.protocols.HeavyHitterProtocol.aggregator`.
The book's page *Deployment* documents the format and the split.
"""
from .device import DEFAULT_MAX_EPSILON, DEFAULT_MAX_POOL_SIZE, report, report_many
from .wire import (
    HEADER_BYTES,
    VERSION,
    ParsedReports,
    encode_protocol_reports,
    encode_reports,
    parse_reports,
    plan_id,
    report_bytes,
)

__all__ = ["report", "report_many", "DEFAULT_MAX_EPSILON", "DEFAULT_MAX_POOL_SIZE",
           "VERSION", "HEADER_BYTES", "plan_id", "encode_reports",
           "encode_protocol_reports", "parse_reports", "ParsedReports", "report_bytes"]
