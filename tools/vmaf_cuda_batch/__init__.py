# SPDX-License-Identifier: BSD-2-Clause-Patent
"""Modules of vmaf-cuda-batch (tools/vmaf-cuda-batch), standard library only."""


class BatchError(Exception):
    """An error of the user's input or environment: printed, exit status 2."""
