"""A run never destroys results and never interleaves with another: --out refuses a folder
holding a run (--resume or --force, which moves it aside), the results folder and the tester
are locked for the run (a second run gets one line naming the holder), an I/O failure is one
line with the path and leaves status failed with everything written before intact, and the
control path's retries are counted. Against a register-file Etherbone server (no frame ever
arrives: every trial fails, deterministically)."""

import json
import os
import resource
import signal
import socket
import subprocess
import sys

import pytest
from clirun import FAST, run
from records import names

from wirespeed import locks
from wirespeed.errors import DeviceError
from wirespeed.locks import Holder, Lock, results_lock

pytestmark = pytest.mark.usefixtures("own_lock_dir")


def one_line(err, field):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"wirespeed: error: {field}: "), lines[0]
    return lines[0]


def test_out_holding_a_complete_run_is_refused_and_kept(capsys, server, tmp_path):
    out = tmp_path / "run"
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), "--json", *FAST)
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), "--tests", "frame-loss",
                       "--loss-points", "100", "--json", *FAST)
    line = one_line(err, "--out")
    assert code == 2 and "holds a wirespeed run (rfc2544-throughput, complete" in line and "--force" in line
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_out_holding_an_interrupted_run_points_to_resume(capsys, server, tmp_path, monkeypatch):
    from wirespeed.host.device import Device

    out = tmp_path / "run"
    real = Device.run_trial
    calls = []

    def interrupt(self, *args, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, *args, **kw)

    monkeypatch.setattr(Device, "run_trial", interrupt)
    code, _, _ = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), *FAST)
    assert code == 130
    monkeypatch.setattr(Device, "run_trial", real)
    jsonl = (out / "trials.jsonl").read_text()
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), *FAST)
    line = one_line(err, "--out")
    assert code == 2 and "interrupted" in line and f"--resume {out}" in line
    assert (out / "trials.jsonl").read_text() == jsonl
    code, _, err = run(capsys, "rfc2544", "--resume", str(out), "--json")
    assert code == 0, err


def test_force_moves_the_old_run_aside_whole(capsys, server, tmp_path):
    out = tmp_path / "run"
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), "--tests", "frame-loss",
                       "--loss-points", "100", *FAST)
    assert code == 0, err
    assert (out / "Frame_Loss.csv").is_file() and (out / "graphs").is_dir()
    old = json.loads((out / "results.json").read_text())
    (out / "my-notes.txt").write_text("mine")
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), "--force", "--json", *FAST)
    assert code == 0, err
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("run.replaced-")]
    assert len(aside) == 1 and f"now in {aside[0]}" in err
    assert json.loads((aside[0] / "results.json").read_text()) == old
    assert (aside[0] / "Frame_Loss.csv").is_file() and (aside[0] / "my-notes.txt").read_text() == "mine"
    # the new run's folder holds the new run only: no table or graph of the old one beside it
    new = json.loads((out / "results.json").read_text())
    assert names(new) == ["throughput"] and not (out / "Frame_Loss.csv").exists()
    assert not (out / "my-notes.txt").exists() and any("--force" in n for n in new["notes"])
    assert not (out / ".wirespeed.lock").exists() and not (aside[0] / ".wirespeed.lock").exists()


def test_a_second_run_into_the_folder_gets_one_line_naming_the_first(capsys, server, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    first = Holder(pid=4242, host=socket.gethostname(), command="wirespeed rfc2544 --out run", results=str(out))
    with results_lock(out).acquire(first):
        code, _, err = run(capsys, "rfc2544", "--target", "sim", "--dut", "loopback", "--out", str(out), *FAST[:-2])
    line = one_line(err, "--out")
    assert code == 2 and "is in use by another run: pid 4242 on" in line
    assert "'wirespeed rfc2544 --out run'" in line and f"results {out}" in line and "since 20" in line
    assert list(out.iterdir()) == []


def test_a_second_run_on_the_tester_gets_one_line_naming_the_first(capsys, server, tmp_path):
    holder = Holder(pid=4343, host=socket.gethostname(), command="wirespeed serve", results="web/run7")
    with locks.tester_lock(server.url).acquire(holder):
        code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path / "r"), *FAST)
    line = one_line(err, "--target")
    assert code == 2 and "pid 4343" in line and "'wirespeed serve'" in line and "results web/run7" in line
    assert not (tmp_path / "r").exists()
    # the same board by another name is the same tester
    assert locks.tester_key(server.url.replace("127.0.0.1", "localhost")) == locks.tester_key(server.url)
    assert locks.tester_key("sim") is None and locks.tester_lock("sim") is None


def test_the_locks_exclude_another_process_and_die_with_it(tmp_path):
    """A lock held by another process (flock) refuses this one with its holder; when that
    process is killed, its lock is stale and taken over."""
    path = tmp_path / "x.lock"
    code = ("import sys, time; sys.path[:0] = sys.argv[2:]\n"
            "from wirespeed.locks import Holder, Lock\n"
            "Lock(__import__('pathlib').Path(sys.argv[1]), 'x').acquire(Holder.current(command='holder'))\n"
            "print('held', flush=True); time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        lock = Lock(path, "the thing")
        from wirespeed.locks import LockBusy
        with pytest.raises(LockBusy, match=rf"the thing is in use by another run: pid {proc.pid} on .*'holder'"):
            lock.acquire(Holder.current(command="me"))
        assert lock.holder().pid == proc.pid
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert lock.holder() is None                     # its file remains, stale
    with lock.acquire(Holder.current(command="me")):
        assert lock.stale is not None and lock.stale.pid == proc.pid and not lock.stale.alive()
        assert lock.holder().command == "me"
    assert not path.exists()


def test_out_path_errors_are_one_line(capsys, server, tmp_path):
    (tmp_path / "file").write_text("x")
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path / "file"), *FAST)
    assert code == 2 and "is a file, not a folder" in one_line(err, "--out")
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path / "file" / "sub"), *FAST)
    assert code == 2 and "Not a directory" in one_line(err, "--out")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only folders")
def test_permission_denied_is_one_line(capsys, server, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(ro / "run"), *FAST)
    assert code == 2 and "Permission denied" in one_line(err, "--out")


def test_a_full_disk_is_one_line_status_failed_nothing_lost(server, tmp_path):
    """The run in a child process whose files may not grow past 48 KiB (RLIMIT_FSIZE: the
    kernel refuses the write with EFBIG, as a full disk refuses it with ENOSPC; no root
    needed): one line naming the file, exit 1, results.json still valid with status failed,
    every trial written before the failure intact."""
    out = tmp_path / "run"
    limit = 48 * 1024

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = dict(os.environ, WIRESPEED_LOCK_DIR=str(tmp_path / "locks"))
    proc = subprocess.run([sys.executable, "-m", "wirespeed.cli", "rfc2544", "--target", server.url, "--out",
                           str(out), "--sizes", "64,128,256,512,1024,1280,1518", *FAST[2:]],
                          capture_output=True, text=True, timeout=300, preexec_fn=limited, env=env)
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("wirespeed: error:")]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"wirespeed: error: --out: cannot write {out}/"), lines[0]
    assert "File too large" in lines[0] and "status failed in results.json" in lines[0], lines[0]
    record = json.loads((out / "results.json").read_text())
    assert record["status"] == "failed"
    trials = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert len(trials) >= len(record["trials"]) > 0
    assert [t["n"] for t in trials] == list(range(1, len(trials) + 1))
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_control_path_retries_are_counted_per_trial_and_run(capsys, server, tmp_path, monkeypatch):
    from wirespeed import transport

    real = transport.open_target
    monkeypatch.setattr("wirespeed.host.tester.open_target", lambda url: real(url, timeout=0.2))
    out = tmp_path / "run"
    from wirespeed.host.device import Device
    real_trial = Device.run_trial
    trials = []

    def lossy(self, *args, **kw):
        trials.append(1)
        if len(trials) == 2:
            server.drop_answers = 2          # two answers lost in the second trial
        return real_trial(self, *args, **kw)

    monkeypatch.setattr(Device, "run_trial", lossy)
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), *FAST)
    assert code == 0, err
    record = json.loads((out / "results.json").read_text())
    per_trial = [t["control"] for t in record["trials"]]
    assert [c["retries"] for c in per_trial][:3] == [0, 2, 0] and per_trial[1]["timeouts"] == 2
    total = record["control_path"]
    assert total["retries"] == 2 and total["timeouts"] == 2 and total["requests"] >= sum(
        c["requests"] for c in per_trial)
    assert "control: 2 retries, 2 timeouts" in err
    assert f"control path ({server.url}): {total['requests']:,} requests, 2 retries, 2 timeouts" in err
    rows = (out / "Trials.csv").read_text().splitlines()
    assert rows[0].endswith("control_retries,control_timeouts,control_duplicates") and rows[2].endswith(",2,2,0")


@pytest.mark.parametrize("where, stop, status, code", [
    ("estimate", KeyboardInterrupt, "interrupted", 130),     # Ctrl-C while the pilot trial runs
    ("trial", KeyboardInterrupt, "interrupted", 130),
    ("trial", DeviceError("the DUT stopped answering"), "failed", 1),
])
def test_a_run_stopped_anywhere_records_what_the_dut_reported(capsys, server, tmp_path, monkeypatch, where, stop,
                                                               status, code):
    from wirespeed.host.device import Device
    from wirespeed.run import Run

    def stopped(*args, **kw):
        raise stop

    state = {"neighbours": [{"dst": "198.18.0.1", "lladdr": "02:00:00:00:00:01"}]}
    monkeypatch.setattr(Device, "dut_state_probe", staticmethod(lambda: state), raising=False)
    if where == "estimate":
        monkeypatch.setattr(Run, "estimate", stopped)
    else:
        monkeypatch.setattr(Device, "run_trial", stopped)
    out = tmp_path / "run"
    assert run(capsys, "rfc2544", "--target", server.url, "--out", str(out), *FAST)[0] == code
    record = json.loads((out / "results.json").read_text())
    assert record["status"] == status and record["dut_state"] == state
