"""One display and one Wine server, with its services, for every test of the Windows build:
each run of the .exe then starts in about 0.1 s, not 3.3 (scripts/wine-run.sh, a session)."""
import os
import subprocess

import pytest

from wine_exe import WINE_RUN


@pytest.fixture(scope='session', autouse=True)
def wine_session():
    started = subprocess.run([str(WINE_RUN), '--session-start'], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             timeout=900)
    assert started.returncode == 0, started.stderr
    display = started.stdout.strip()
    assert display.startswith(':'), started.stdout
    os.environ['WINE_RUN_DISPLAY'] = display
    yield display
    del os.environ['WINE_RUN_DISPLAY']
    subprocess.run([str(WINE_RUN), '--session-stop', display], stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=120, check=True)
