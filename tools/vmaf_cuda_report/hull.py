# SPDX-License-Identifier: BSD-2-Clause-Patent
"""The rate-quality convex hull of a ladder: the upper convex hull of the points
(ln bitrate, quality) taken in ascending bitrate, by Andrew's monotone chain.

- Collinear points are dropped (within rounding) (a point on the segment between two hull points adds
  nothing an encoder could not reach by switching between them).
- Of renditions at the same bitrate only the best quality can be on it.
- The hull ends at its highest quality: a rendition with more bits and no more quality is
  never worth streaming (Netflix's convex-hull encoding practice), so the hull is
  increasing in both rate and quality, and BD-rate can interpolate along it.
Points with a missing or non-finite bitrate or quality, or a bitrate <= 0, are not on it."""

import math


def _not_right_turn(o, a, b):
    """o -> a -> b turns left or goes straight: a is on or below the segment o-b. Straight
    within rounding (1e-12 of the products): ln 100, ln 200, ln 400 are collinear."""
    p, q = (a[0] - o[0]) * (b[1] - o[1]), (a[1] - o[1]) * (b[0] - o[0])
    return p - q >= -1e-12 * (abs(p) + abs(q))


def upper_hull(points):
    """Indices into points [(bitrate, quality)] of the hull, in ascending bitrate."""
    ok = [i for i, (r, q) in enumerate(points)
          if r is not None and q is not None and math.isfinite(r) and r > 0 and math.isfinite(q)]
    # ascending rate; at equal rate the best quality last (it replaces the others)
    ok.sort(key=lambda i: (points[i][0], points[i][1], -i))
    pts = [(math.log(points[i][0]), points[i][1], i) for i in ok]
    chain = []
    for p in pts:
        if chain and chain[-1][0] == p[0]:  # same rate: the better quality only
            chain.pop()
        while len(chain) >= 2 and _not_right_turn(chain[-2], chain[-1], p):
            chain.pop()  # not a strict right turn: below or on the segment
        chain.append(p)
    # only while quality increases
    end = 1
    while end < len(chain) and chain[end][1] > chain[end - 1][1]:
        end += 1
    return [p[2] for p in chain[:end]]
