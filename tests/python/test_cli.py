"""The CLI answers --help and refuses unknown commands with a non-zero status."""
import subprocess


def test_unknown_command_is_refused(pagoda_bin):
    result = subprocess.run([pagoda_bin, "no-such-command"], capture_output=True, text=True)
    assert result.returncode != 0
    assert "unknown command" in result.stderr
