import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import pytest


@pytest.fixture
def gpu():
    """gpu:0 for a test that needs a GPU. Without an accelerator the test skips saying so, or
    fails under MAX_C_REQUIRE_GPU=1 (a GPU machine's run, where a skip would hide a fault)."""
    from max_c.driver import Accelerator, accelerator_count

    if accelerator_count() == 0:
        reason = "this process sees no accelerator"
        if os.environ.get("MAX_C_REQUIRE_GPU", "0") not in ("", "0"):
            pytest.fail(reason + " (MAX_C_REQUIRE_GPU=1)")
        pytest.skip(reason)
    return Accelerator()
