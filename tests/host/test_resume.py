"""rfc2544 --resume DIR: an interrupted run continues with its recorded parameters; the frame
sizes it finished are not measured again, and the files end as a run in one go would write them
(apart from notes, timestamps and the earlier trials, kept). Against a register-file Etherbone
server (no frame ever arrives, so every figure is deterministic)."""

import json

import pytest
from clirun import run
from ebserver import EtherboneServer, serve_identity
from records import parameters, results

from wirespeed.host.device import Device

FAST = ["--trial-duration", "2us", "--wait", "1us", "--resolution", "10", "--settle", "1us", "--dut", "a cable"]
ALL = ["--tests", "throughput,frame-loss,back-to-back", "--b2b-trials", "1", "--b2b-max-burst", "4",
       "--loss-points", "100,50"]
CSVS = ["Throughput.csv", "Latency.csv", "Latency_Histograms.csv", "Frame_Loss.csv", "Back_to_Back.csv"]



def assert_one_line_error(err, field, text):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"wirespeed: error: {field}: "), lines[0]
    assert text in lines[0], lines[0]


class Counting:
    """Counts the trials and learning phases the Device runs (frame size of each trial), and
    raises KeyboardInterrupt (Ctrl-C) at trial number ``interrupt_at``."""

    def __init__(self, monkeypatch):
        self.trials, self.learns, self.interrupt_at = [], 0, None
        real_trial, real_burst, real_learn = Device.run_trial, Device.run_burst_trial, Device.learn
        counter = self

        def run_trial(self, *args, **kw):
            return counter._count("trial", lambda: real_trial(self, *args, **kw))

        def run_burst_trial(self, *args, **kw):
            return counter._count("burst", lambda: real_burst(self, *args, **kw))

        def learn(self, *args, **kw):
            counter.learns += 1
            return real_learn(self, *args, **kw)

        monkeypatch.setattr(Device, "run_trial", run_trial)
        monkeypatch.setattr(Device, "run_burst_trial", run_burst_trial)
        monkeypatch.setattr(Device, "learn", learn)

    def _count(self, kind, call):
        if self.interrupt_at is not None and len(self.trials) + 1 == self.interrupt_at:
            raise KeyboardInterrupt
        result = call()
        self.trials.append((kind, result.frame_size))
        return result

    def reset(self):
        self.trials, self.learns, self.interrupt_at = [], 0, None


def jsonl(path):
    return [json.loads(line) for line in (path / "trials.jsonl").read_text().splitlines()]


def without_times(value):
    """A record part without what differs between two runs of the same figures (timestamps)."""
    if isinstance(value, dict):
        return {k: without_times(v) for k, v in value.items() if k not in ("started_ns",)}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def test_interrupted_throughput_run_resumes_where_it_stopped(capsys, server, tmp_path, monkeypatch):
    counting = Counting(monkeypatch)
    out = tmp_path / "run"
    counting.interrupt_at = 8          # 64 B: 5 trials, done; 128 B: 2 trials, then Ctrl-C
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), "--sizes", "64,128", *FAST)
    assert code == 130, err
    before = json.loads((out / "results.json").read_text())
    assert before["status"] == "interrupted" and [r["frame_size"] for r in results(before, "throughput")] == [64]
    assert len(before["trials"]) == 7
    jsonl_before = (out / "trials.jsonl").read_text()

    counting.reset()
    code, stdout, err = run(capsys, "rfc2544", "--resume", str(out), "--json")
    assert code == 0, err
    assert counting.trials == [("trial", 128)] * 5          # 64 B not measured again; 128 B from scratch
    assert counting.learns == 1                               # the learning phase again
    record = json.loads(stdout)
    assert record == json.loads((out / "results.json").read_text())
    assert record["status"] == "complete" and record["error"] is None
    assert [r["frame_size"] for r in results(record, "throughput")] == [64, 128]
    assert results(record, "throughput")[0] == results(before, "throughput")[0]        # kept as measured
    assert record["trials"][:7] == before["trials"]
    assert len(record["trials"]) == len(record["trial_tags"]) == 12
    assert [bool(t.get("superseded")) for t in record["trial_tags"]] == [False] * 5 + [True] * 2 + [False] * 5
    assert [t["frame_size"] for t in record["trials"][7:]] == [128] * 5
    assert len(record["resumed"]) == 1 and record["resumed"][0]["status"] == "interrupted"
    assert record["resumed"][0]["superseded_trials"] == 2
    assert any(n.startswith("resumed ") for n in record["notes"]) and "resumed" in err
    assert record["target"] == server.url and record["dut"] == {"description": "a cable"}
    # trials.jsonl: appended to, each trial once, numbered on
    text = (out / "trials.jsonl").read_text()
    assert text.startswith(jsonl_before)
    assert [line["n"] for line in jsonl(out)] == list(range(1, 13))
    trials_csv = (out / "Trials.csv").read_text().splitlines()
    assert len(trials_csv) == 13 and trials_csv[6].split(",")[2] == "superseded"

    # the same figures in one go: the same tables and results
    counting.reset()
    once = tmp_path / "once"
    code, stdout, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(once), "--sizes", "64,128",
                            "--json", *FAST)
    assert code == 0, err
    one_go = json.loads(stdout)
    for name in ("Throughput.csv", "Latency.csv", "Latency_Histograms.csv"):
        assert (out / name).read_text() == (once / name).read_text(), name
    assert without_times(results(record, "throughput")) == without_times(results(one_go, "throughput"))
    assert parameters(record, "throughput") == parameters(one_go, "throughput")
    resumed_rows = [row.split(",")[1:] for row in trials_csv[1:] if "superseded" not in row]
    assert resumed_rows == [row.split(",")[1:] for row in (once / "Trials.csv").read_text().splitlines()[1:]]


def test_every_test_resumes_and_ends_as_one_run(capsys, server, tmp_path, monkeypatch):
    """Interrupted in frame loss of the second size: throughput is not measured again, frame
    loss of 64 B neither, 128 B from scratch, then back-to-back (with the throughput of the
    first part for its corrected buffer time)."""
    counting = Counting(monkeypatch)
    out = tmp_path / "run"
    counting.interrupt_at = 14         # throughput 5 + 5, frame loss 64 B 2, 128 B: 1, then Ctrl-C
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), "--sizes", "64,128",
                       *ALL, *FAST)
    assert code == 130, err
    before = json.loads((out / "results.json").read_text())
    assert [r["frame_size"] for r in results(before, "frame-loss")] == [64] and results(before, "back-to-back") == []

    counting.reset()
    code, stdout, err = run(capsys, "rfc2544", "--resume", str(out), "--json")
    assert code == 0, err
    assert counting.trials == [("trial", 128)] * 2 + [("burst", 64)] * 3 + [("burst", 128)] * 3
    assert counting.learns == 1
    record = json.loads(stdout)
    assert record["status"] == "complete"
    assert [len(results(record, k)) for k in ("throughput", "frame-loss", "back-to-back")] == [2, 2, 2]
    assert [bool(t.get("superseded")) for t in record["trial_tags"]] == [False] * 12 + [True] + [False] * 8
    assert [line["n"] for line in jsonl(out)] == list(range(1, 22))

    counting.reset()
    once = tmp_path / "once"
    code, stdout, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(once), "--sizes", "64,128",
                            "--json", *ALL, *FAST)
    assert code == 0, err
    one_go = json.loads(stdout)
    for name in CSVS:
        assert (out / name).read_text() == (once / name).read_text(), name
    for key in ("tests", "learning_parameters", "test", "definitions", "calibration", "latency_calibrated"):
        assert without_times(record[key]) == without_times(one_go[key]), key
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in once.iterdir())


def test_a_killed_run_keeps_the_trials_only_trials_jsonl_had(capsys, server, tmp_path, monkeypatch):
    """A run killed outright (no chance to write results.json: status 'running', the last
    trials only in trials.jsonl) resumes too; those trials join the record, superseded."""
    counting = Counting(monkeypatch)
    out = tmp_path / "run"
    counting.interrupt_at = 8
    code, _, _ = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), "--sizes", "64,128", *FAST)
    assert code == 130
    record = json.loads((out / "results.json").read_text())
    record["status"], record["trials"], record["trial_tags"] = "running", record["trials"][:5], record["trial_tags"][:5]
    (out / "results.json").write_text(json.dumps(record))
    jsonl_before = (out / "trials.jsonl").read_text()

    counting.reset()
    code, stdout, err = run(capsys, "rfc2544", "--resume", str(out), "--json")
    assert code == 0, err
    record = json.loads(stdout)
    assert len(record["trials"]) == 12 and [t.get("superseded", False) for t in record["trial_tags"]][5:7] == [True] * 2
    assert (out / "trials.jsonl").read_text().startswith(jsonl_before)
    assert [line["n"] for line in jsonl(out)] == list(range(1, 13))


def test_a_resumed_run_interrupted_again_resumes_again(capsys, server, tmp_path, monkeypatch):
    counting = Counting(monkeypatch)
    counting.interrupt_at = 3          # 64 B: 2 trials, then Ctrl-C
    argv = ["--sizes", "64,128,256", *FAST]
    code, _, _ = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path), *argv)
    assert code == 130
    counting.reset()
    counting.interrupt_at = 8          # 64 B again: 5 trials; 128 B: 2 trials, then Ctrl-C
    code, _, err = run(capsys, "rfc2544", "--resume", str(tmp_path))
    assert code == 130 and "interrupted" in err and "Traceback" not in err
    record = json.loads((tmp_path / "results.json").read_text())
    assert record["status"] == "interrupted" and [r["frame_size"] for r in results(record, "throughput")] == [64]
    counting.reset()
    code, stdout, err = run(capsys, "rfc2544", "--resume", str(tmp_path), "--json")
    assert code == 0, err
    assert counting.trials == [("trial", 128)] * 5 + [("trial", 256)] * 5
    record = json.loads(stdout)
    assert [r["frame_size"] for r in results(record, "throughput")] == [64, 128, 256] and record["status"] == "complete"
    assert [r["status"] for r in record["resumed"]] == ["interrupted", "interrupted"]
    assert [bool(t.get("superseded")) for t in record["trial_tags"]] == \
        [True] * 2 + [False] * 5 + [True] * 2 + [False] * 10
    assert [line["n"] for line in jsonl(tmp_path)] == list(range(1, 20))
    assert len((tmp_path / "Throughput.csv").read_text().splitlines()) == 4


def test_a_run_stopped_after_its_last_size_only_ends(capsys, server, tmp_path, monkeypatch):
    """Every size measured but the status not written: resuming measures nothing, runs no
    learning phase and marks the run complete."""
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path), "--sizes", "64",
                       "--json", *FAST)
    assert code == 0, err
    record = json.loads((tmp_path / "results.json").read_text())
    record["status"] = "interrupted"
    (tmp_path / "results.json").write_text(json.dumps(record))
    counting = Counting(monkeypatch)
    code, stdout, err = run(capsys, "rfc2544", "--resume", str(tmp_path), "--json")
    assert code == 0, err
    assert counting.trials == [] and counting.learns == 0
    after = json.loads(stdout)
    assert after["status"] == "complete" and results(after, "throughput") == results(record, "throughput")
    assert after["trials"] == record["trials"] and not any(t.get("superseded") for t in after["trial_tags"])


# Errors: one line, exit 2, nothing measured ----------------------------------------------------------


def test_resume_a_complete_run_is_nothing_to_resume(capsys, server, tmp_path, monkeypatch):
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path), "--sizes", "64",
                       "--json", *FAST)
    assert code == 0, err
    before = (tmp_path / "results.json").read_text()
    counting = Counting(monkeypatch)
    code, out, err = run(capsys, "rfc2544", "--resume", str(tmp_path))
    assert code == 2 and out == ""
    assert_one_line_error(err, "--resume", "is complete: nothing to resume")
    assert counting.trials == [] and (tmp_path / "results.json").read_text() == before


@pytest.mark.parametrize("content, text", [
    (None, "no folder"),
    ("", "no results.json in"),
    ("{not json", "is not valid JSON"),
    ("[1, 2]", "not a wirespeed results record"),
    ('{"format": "wirespeed-results/99"}', "has format 'wirespeed-results/99'"),
    ('{"format": "wirespeed-results/1", "status": "interrupted"}', "is not a valid wirespeed-results/1 record"),
])
def test_resume_errors(capsys, tmp_path, content, text):
    folder = tmp_path / "run"
    if content is not None:
        folder.mkdir()
        if content:
            (folder / "results.json").write_text(content)
    code, out, err = run(capsys, "rfc2544", "--resume", str(folder))
    assert code == 2 and out == ""
    assert_one_line_error(err, "--resume", text)


@pytest.mark.parametrize("argv, flag", [
    (["--sizes", "64"], "--sizes"),
    (["--trial-duration", "1ms"], "--trial-duration"),
    (["--tests", "frame-loss"], "--tests"),
    (["--out", "elsewhere"], "--out"),
    (["--no-learning"], "--learning"),
])
def test_measurement_flags_are_refused_with_resume(capsys, tmp_path, argv, flag):
    code, out, err = run(capsys, "rfc2544", "--resume", str(tmp_path), *argv)
    assert code == 2 and out == ""
    assert_one_line_error(err, "--resume", f"not {flag}")


def test_a_board_run_does_not_resume_on_sim(capsys, server, tmp_path, monkeypatch):
    counting = Counting(monkeypatch)
    counting.interrupt_at = 2
    code, _, _ = run(capsys, "rfc2544", "--target", server.url, "--out", str(tmp_path), "--sizes", "64", *FAST)
    assert code == 130
    code, out, err = run(capsys, "rfc2544", "--resume", str(tmp_path), "--target", "sim")
    assert code == 2
    assert_one_line_error(err, "--target", f"the run was on {server.url}")


def test_a_board_at_a_new_address(capsys, regmap, tmp_path, monkeypatch):
    counting = Counting(monkeypatch)
    with EtherboneServer() as first:
        serve_identity(first, regmap)
        counting.interrupt_at = 2
        code, _, _ = run(capsys, "rfc2544", "--target", first.url, "--out", str(tmp_path), "--sizes", "64", *FAST)
    assert code == 130
    counting.reset()
    with EtherboneServer() as second:
        serve_identity(second, regmap)
        code, stdout, err = run(capsys, "rfc2544", "--resume", str(tmp_path), "--target", second.url, "--json")
    assert code == 0, err
    record = json.loads(stdout)
    assert record["target"] == second.url and record["status"] == "complete"
    assert f"(was {first.url})" in record["notes"][-1]
    assert counting.trials == [("trial", 64)] * 5


def test_recovery_and_reset_resume(capsys, server, tmp_path, monkeypatch):
    """A run stopped at its reset trial resumes with the reset alone (its hook run again); the
    system recovery of a size without throughput counts as done (nothing to overload)."""
    counting = Counting(monkeypatch)
    out, mark = tmp_path / "run", tmp_path / "reset-ran"
    hook = f"touch {mark}"
    counting.interrupt_at = 6          # 64 B: 5 throughput trials; then the reset trial
    code, _, err = run(capsys, "rfc2544", "--target", server.url, "--out", str(out), "--sizes", "64",
                       "--tests", "throughput,system-recovery,reset", "--reset-hook", hook, "--reset-trials", "1",
                       *FAST)
    assert code == 130, err
    before = json.loads((out / "results.json").read_text())
    assert results(before, "reset") == [] and results(before, "system-recovery") == [] and not mark.exists(), \
        results(before, "throughput")

    counting.reset()
    code, stdout, err = run(capsys, "rfc2544", "--resume", str(out), "--json")
    assert code == 0, err
    assert counting.trials == [("trial", 64)], err
    record = json.loads(stdout)
    assert record["status"] == "complete" and results(record, "reset")[0]["trials"][0]["trigger"] == f"hook: {hook}"
    assert mark.exists()                                      # the hook reset the "DUT"
    assert (out / "Reset.csv").read_text().count("\n") == 3   # header, the trial, the mean
