"""Shell completion (typer's): ``--show-completion`` prints a script for the shell, and the
command answers its completion requests."""

import pytest

from wirespeed.cli import main


def test_show_completion_prints_a_script(capsys, monkeypatch):
    # typer names the shell from the test's parent processes: under a service or nohup there is
    # none, and it then refuses ("Shell  not supported")
    monkeypatch.setattr("typer.completion._get_shell_name", lambda: "bash")
    with pytest.raises(SystemExit) as exit_info:
        main(["--show-completion"])
    assert exit_info.value.code == 0
    script = capsys.readouterr().out
    assert "_WIRESPEED_COMPLETE" in script and "wirespeed" in script


def test_help_offers_completion(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--install-completion" in out and "--show-completion" in out


@pytest.mark.parametrize("words, cword, expected", [
    ("wirespeed rfc", 1, "rfc2544"),
    ("wirespeed dut-m", 1, "dut-models"),
    ("wirespeed rfc2544 --siz", 2, "--sizes"),
])
def test_completes_commands_and_options(monkeypatch, capsys, words, cword, expected):
    monkeypatch.setenv("_WIRESPEED_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", words)
    monkeypatch.setenv("COMP_CWORD", str(cword))
    with pytest.raises(SystemExit):
        main([])
    assert expected in capsys.readouterr().out.split()
