"""A PostgreSQL restart stopped every scheduler sharing the store, leader and standbys (exit 1,
"lost the connection to the scheduler's store"): the queue then had nobody until someone
started them again. Now each gives up leading (its session, and the lock with it, went
with the server), connects again, tries again every second while the server is down, and
competes anew: one leads, the other stands by, and the jobs started before the restart are
found (never run twice).

The restart is played by a TCP proxy between the schedulers and the real server: it drops
every connection and refuses new ones for a while, as a restarting server does to its
clients. Restarting the real server would cut the other tests that share it."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from reconciler.scheduler.postgres_store import PostgresStore
from tests.scheduler.scenario import ok, wait_until
from tests.scheduler.test_leader import Scheduler, leader_pid, statuses, stop
from tests.state.services import drop_schema, new_schema, pg_url

CONFIG = """kind: Cluster
name: team
provider: local
state: {{backend: postgres, dsn: '{dsn}', key: {schema}}}
---
kind: ResourcePool
name: seats
capacity:
  seat: 4
"""


class Outage:
    """A TCP proxy to the server: `cut()` drops every connection and refuses new ones (they
    are closed as soon as accepted) until `restore()`."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.down = False
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.down:
                    client.close()
                    continue
                try:
                    server = socket.create_connection(self.target)
                except OSError:
                    client.close()
                    continue
                self.open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        with self.lock:
            self.down = True
            for end in self.open:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                end.close()
            self.open.clear()

    def restore(self) -> None:
        with self.lock:
            self.down = False

    def close(self) -> None:
        self.cut()
        self.listener.close()


@pytest.fixture
def team(tmp_path: Path) -> Iterator[tuple[Path, PostgresStore, Outage]]:
    url, schema = pg_url(), new_schema()
    parts = urlsplit(url)
    outage = Outage(parts.hostname or "127.0.0.1", parts.port or 5432)
    netloc = parts.netloc.rsplit("@", 1)[0] + f"@127.0.0.1:{outage.port}"
    proxied = urlunsplit(parts._replace(netloc=netloc))
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG.format(dsn=proxied, schema=schema))
    ok("apply", directory, "--auto-approve")
    ok("jobs", "list", "--chdir", directory)  # the queue's tables
    store = PostgresStore(url, schema=schema)  # straight to the server: never cut
    yield directory, store, outage
    store.close()
    outage.close()
    drop_schema(url, schema)


def _submit(directory: Path, name: str, until: Path) -> None:
    job = directory.parent / f"{name}.yaml"
    job.write_text(
        f"kind: Job\nname: {name}\npool: seats\nresources:\n  custom:\n    seat: 1\n"
        f"run: while [ ! -e {until} ]; do sleep 0.05; done; echo ran-{name}\n"
    )
    ok("jobs", "submit", job, "--chdir", directory)


def test_leader_and_standby_outlive_a_server_restart(
    team: tuple[Path, PostgresStore, Outage],
) -> None:
    directory, store, outage = team
    ends = directory.parent / "ends"
    _submit(directory, "before", ends)
    leader = Scheduler(directory, "leader")
    wait_until("the first scheduler leads", lambda: leader_pid(store) == leader.pid)
    standby = Scheduler(directory, "standby")
    try:
        wait_until("the other stands by", lambda: standby.said("standing by"))
        wait_until("the job runs", lambda: statuses(store) == {1: "running"})

        outage.cut()
        wait_until("both lost it", lambda: leader.said("lost the connection")
                   and standby.said("lost the connection"))  # fmt: skip
        time.sleep(1.5)  # down for longer than a reconnect's pause: they try again
        assert (leader.process.poll(), standby.process.poll()) == (None, None)
        outage.restore()

        wait_until("both connected again", lambda: leader.said("connected again")
                   and standby.said("connected again"))  # fmt: skip
        wait_until("one of them leads", lambda: leader_pid(store) in (leader.pid, standby.pid))
        ends.touch()  # the job started before the restart is found and its end recorded
        _submit(directory, "after", ends)
        wait_until("both jobs ended", lambda: statuses(store) == {1: "succeeded", 2: "succeeded"})
        assert (leader.process.poll(), standby.process.poll()) == (None, None)
        waiting = standby if leader_pid(store) == leader.pid else leader
        assert waiting.err.read_text().rsplit("connected again", 1)[1].count("standing by") == 1
    finally:
        ends.touch()
        codes = stop(leader, standby)
    assert codes == [0, 0], (leader.err.read_text(), standby.err.read_text())
    for job in (1, 2):
        log = directory / ".poolform" / "jobs" / str(job) / "output.log"
        assert log.read_text().count("ran-") == 1  # it ran once, not again after the restart
