"""test_ops_signals -- the signals that stop gapsimd (server/gapsimd_main.c).

- SIGHUP (the hang-up of the terminal or ssh session the daemon was started
  from) stops it as SIGTERM does: exit 0, the "stopping" and "stopped" log
  lines, the clean-close mark gapsim.db-clean left, and the next start skips
  quick_check (SIGHUP used to kill it outright: no mark, so the next start
  read the whole store and said the last run did not close it cleanly);
- started with SIGHUP ignored (nohup), it keeps running through a SIGHUP.
"""
import os
import re
import signal
import subprocess
import time
import unittest

import gsd_harness as h


def log_since(d, off):
    with open(d.log_path, "rb") as f:
        f.seek(off)
        return f.read().decode(errors="replace")


class StopSignals(unittest.TestCase):

    def test_sighup_stops_cleanly(self):
        d = h.Daemon(workers=1).start()
        try:
            self.assertEqual(d.get("/healthz").status, 200)
            off = os.path.getsize(d.log_path)
            d.proc.send_signal(signal.SIGHUP)
            rc = d.proc.wait(30)  # d.stop() would add a SIGTERM to a daemon still running
            self.assertEqual(rc, 0, log_since(d, off))
            d.stop()
            log = log_since(d, off)
            self.assertRegex(log, r"signal %d \(SIGHUP\): stopping" % signal.SIGHUP)
            self.assertRegex(log, r"gapsimd info: stopped\n")
            self.assertTrue(os.path.exists(os.path.join(d.data_dir, "gapsim.db-clean")), log)
            off = os.path.getsize(d.log_path)
            d.start()
            log = log_since(d, off)
            self.assertIn("closed cleanly by the last run and unchanged since; quick_check "
                          "skipped", log)
            self.assertNotIn("did not close the store cleanly", log)
        finally:
            d.cleanup()

    def test_sighup_ignored_under_nohup(self):
        d = h.Daemon(workers=1)  # its data directory and log; started here with SIGHUP ignored
        cmd = [h.binary("gapsimd"), "--port", "0", "--data-dir", d.data_dir, "--workers", "1"]
        with open(d.log_path, "ab") as log:
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log,
                                 preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
        try:
            line = p.stdout.readline().decode(errors="replace")
            self.assertRegex(line, r"listening on http://")
            d.url = re.search(r"(http://[0-9.]+:[0-9]+)", line).group(1)
            p.send_signal(signal.SIGHUP)
            time.sleep(0.3)
            self.assertIsNone(p.poll(), "a SIGHUP stopped a daemon started under nohup")
            self.assertEqual(d.get("/healthz").status, 200)
            p.send_signal(signal.SIGTERM)
            self.assertEqual(p.wait(30), 0)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stdout.close()
            d.cleanup()


if __name__ == "__main__":
    unittest.main()
