"""Parse workers forked from one process that imported libcst once (a "zygote").

Why: importing libcst costs 0.17-0.3 s of CPU per process. A pool forked from the main
process (which never imports libcst: a warm run does not need it) pays it in every worker, on
the critical path, after the jobs are known. The zygote is forked as early as the command can
(``prestart``, before the tool's own imports and the release lookup), imports libcst while the
main process is still starting, and forks one lane per share of each batch of jobs: every lane
starts with libcst loaded.

Protocol (POSIX only; elsewhere the caller keeps its process pool). Jobs and results travel as
pickles in files of a private temporary folder; the pipes carry short lines only (each under
``PIPE_BUF``, so written whole), which keeps every write from blocking on a reader that is busy:

* main -> zygote, one pipe: ``J <file>`` a batch (a list of lanes, each a list of jobs),
  ``Q`` quit; end of file also quits.
* lane -> main, one pipe per lane: ``P <pid>`` when it starts, then ``D <file>`` (a list of
  results) or ``E <file>`` (the text of the exception that stopped it).

The zygote is single-threaded and forks only itself; a lane that dies without writing is seen
by the main process (its pid no longer exists: the zygote reaps lanes automatically), so a
crash is an error, never a hang. Ownership is by pid: a process forked from the owner (the
audit's own pool workers) never uses, or shuts down, its parent's zygote.
"""

from __future__ import annotations

import os
import pickle
import select
import shutil
import signal
import tempfile
import time

_LIVE: "Zygote | None" = None
_AT_EXIT = False


def available() -> bool:
    return hasattr(os, "fork") and os.name == "posix"


def prestart(lanes: int | None = None) -> None:
    """Fork the zygote now (the next call-site pass of this process uses it)."""
    if available():
        get(lanes or os.cpu_count() or 1)


def get(lanes: int) -> "Zygote | None":
    """This process's zygote with at least ``lanes`` lanes (started if needed), or None."""
    global _LIVE
    if not available():
        return None
    z = _LIVE
    if z is not None and (z.owner != os.getpid() or not z.alive() or z.lanes < lanes):
        if z.owner == os.getpid():
            z.close()
        _LIVE = z = None
    if z is None:
        try:
            z = _LIVE = Zygote(lanes)
        except OSError:
            return None
        global _AT_EXIT
        if not _AT_EXIT:
            import atexit
            atexit.register(shutdown)   # a warm run never used it: stop its import at once
            _AT_EXIT = True
    return z


def shutdown() -> None:
    """Stop this process's zygote (the next pass forks a fresh one)."""
    global _LIVE
    z, _LIVE = _LIVE, None
    if z is not None and z.owner == os.getpid():
        z.close()


class LaneError(Exception):
    """A lane died or raised; the caller fails closed."""


class Zygote:
    def __init__(self, lanes: int):
        self.owner = os.getpid()
        self.lanes = lanes
        self.dir = tempfile.mkdtemp(prefix="fa4-audit-lanes-")
        cmd_r, cmd_w = os.pipe()
        outs = [os.pipe() for _ in range(lanes)]
        pid = os.fork()
        if pid == 0:                                   # the zygote
            code = 0
            try:
                os.close(cmd_w)
                for r, _ in outs:
                    os.close(r)
                _zygote_main(cmd_r, [w for _, w in outs], self.dir)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(cmd_r)
        for _, w in outs:
            os.close(w)
        self.pid = pid
        self.cmd = cmd_w
        self.outs = [r for r, _ in outs]
        self._buf = {r: b"" for r in self.outs}
        self._batch = 0
        self.busy = False

    def alive(self) -> bool:
        try:
            pid, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return False
        return pid == 0

    def submit(self, shares: list[list]) -> list[int]:
        """Hand one batch to the lanes: ``shares[i]`` is lane i's list of jobs. Returns the
        lanes used. Never blocks (the jobs travel in a file)."""
        self._batch += 1
        path = os.path.join(self.dir, f"batch{self._batch}.pkl")
        used = [i for i, s in enumerate(shares) if s]
        with open(path, "wb") as fh:
            pickle.dump([s if s else None for s in shares], fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.write(self.cmd, f"J {path}\n".encode())
        self.busy = True
        return used

    def collect(self, used: list[int], timeout: float) -> list:
        """The results of every lane in ``used`` (one list, in lane order). Raises
        ``LaneError`` when a lane raised or died, ``TimeoutError`` past ``timeout``."""
        deadline = time.monotonic() + timeout
        pids: dict[int, int] = {}
        got: dict[int, list] = {}
        fds = {self.outs[i]: i for i in used}
        try:
            while len(got) < len(used):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                ready, _, _ = select.select([fd for fd, i in fds.items() if i not in got], [],
                                            [], min(left, 0.5))
                for fd in ready:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        raise LaneError("the parse process ended unexpectedly")
                    self._buf[fd] += chunk
                    while b"\n" in self._buf[fd]:
                        line, self._buf[fd] = self._buf[fd].split(b"\n", 1)
                        kind, _, arg = line.decode().partition(" ")
                        i = fds[fd]
                        if kind == "P":
                            pids[i] = int(arg)
                        elif kind == "D":
                            with open(arg, "rb") as fh:
                                got[i] = pickle.load(fh)
                            os.unlink(arg)
                        else:
                            with open(arg, encoding="utf-8") as fh:
                                text = fh.read()
                            os.unlink(arg)
                            raise LaneError(text)
                if not ready:
                    # a lane that died without a word (killed, out of memory) is an error
                    for i in used:
                        if i not in got and i in pids and not _exists(pids[i]):
                            # its last words may still be in the pipe
                            r, _, _ = select.select([self.outs[i]], [], [], 0)
                            if not r:
                                raise LaneError(f"parse worker {pids[i]} died")
                    if not self.alive() and not pids:
                        raise LaneError("the parse process ended unexpectedly")
        except BaseException:
            self.close()
            raise
        self.busy = False
        return [r for i in used for r in got[i]]

    def close(self) -> None:
        """Stop the zygote and any lane still running (they share its process group)."""
        global _LIVE
        if _LIVE is self:
            _LIVE = None
        if self.owner != os.getpid():
            return
        try:
            os.write(self.cmd, b"Q\n")
        except OSError:
            pass
        for fd in [self.cmd, *self.outs]:
            try:
                os.close(fd)
            except OSError:
                pass
        self.outs = []
        try:
            if os.getpgid(self.pid) == self.pid:
                os.killpg(self.pid, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _zygote_main(cmd_r: int, outs: list[int], folder: str) -> None:
    try:
        os.setpgid(0, 0)             # lanes join this group: one kill stops them all
    except OSError:
        pass                         # not allowed here: ``close`` kills the zygote alone

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # lanes are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # the main process decides when to stop
    from analyzer.sites import parse as PA
    from analyzer.sites.extract import extract  # noqa: F401  (libcst, once, for every lane)

    buf = b""
    while True:
        chunk = os.read(cmd_r, 4096)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line == b"Q":
                return
            path = line.decode()[2:]
            with open(path, "rb") as fh:
                shares = pickle.load(fh)
            os.unlink(path)
            for i, share in enumerate(shares):
                if share and os.fork() == 0:
                    _lane(i, share, outs[i], folder, PA)


def _lane(i: int, share: list, out: int, folder: str, PA) -> None:
    code = 0
    try:
        os.write(out, f"P {os.getpid()}\n".encode())
        try:
            results = [PA._parse_job(j) for j in share]
        except BaseException as exc:
            import traceback
            fd, path = tempfile.mkstemp(dir=folder, prefix=f"err{i}-")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(f"{type(exc).__name__}: {exc}\n"
                         + "".join(traceback.format_exception(exc))[-4000:])
            os.write(out, f"E {path}\n".encode())
        else:
            fd, path = tempfile.mkstemp(dir=folder, prefix=f"res{i}-")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(results, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.write(out, f"D {path}\n".encode())
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def split(jobs: list, lanes: int, size) -> list[list]:
    """Share ``jobs`` among ``lanes`` (largest first, each to the least loaded lane)."""
    shares: list[list] = [[] for _ in range(lanes)]
    load = [0] * lanes
    for j in sorted(jobs, key=lambda j: -size(j)):
        k = load.index(min(load))
        shares[k].append(j)
        load[k] += size(j)
    return shares
