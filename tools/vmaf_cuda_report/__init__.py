# SPDX-License-Identifier: BSD-2-Clause-Patent
"""vmaf_cuda_report: from scores to decisions. Reads the project's JSON/NDJSON logs (or a
vmaf-cuda-batch run folder), measures each rendition's bitrate with ffprobe, and writes a
one-page HTML report, report.json, CSV tables and PNG/SVG plots: per-rendition pooled scores,
the rate-quality convex hull, BD-rate / BD-quality against another run, per-frame curves
with the worst seconds marked. docs/report.md describes it.

Modules by concern: logs (JSON/NDJSON logs, pooling), media (ffprobe: bitrate, size, frame
rate), hull (upper convex hull), bd (Bjontegaard deltas: PCHIP and cubic), sources (batch
folders, manifests, log arguments), build (the report's data), plots (matplotlib), html
(the page), tables (report.json, CSV), cli (the command line).
"""

VERSION = "0.1.0"
