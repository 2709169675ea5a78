"""A long run gives way to a quicker one between its layers (issue 20, "One slow run must not stall the class").

Fake runs of L layers take turns in a :class:`vit.serve.queue.FairQueue` in threads: each calls
``turn.give_way()`` after each layer, as the tracer's ``on_layer`` does. Events order what happens
(no sleeps decide anything); the tests check the order of layers run, their counts, and who paused.
"""

from __future__ import annotations

import threading
import time

import pytest

from vit.serve.queue import Crowded, FairQueue, Withdrawn
from vit.ui import meter


class FakeRun:
    """A request that runs ``layers`` layers in its turn; ``hold`` (layer -> Event) stops it after that layer."""

    def __init__(self, queue: FairQueue, session: str, seconds: float, resource, layers: int, log: list,
                 hold: dict | None = None, wanted=None, address: str = ""):
        self.queue, self.session, self.seconds, self.resource = queue, session, seconds, resource
        self.address = address
        self.layers, self.log, self.hold, self.wanted = layers, log, hold or {}, wanted
        self.reached = {n: threading.Event() for n in self.hold}
        self.reports: list[tuple[int, float]] = []
        self.outcome = None
        self.thread = threading.Thread(target=self._run, name=session)
        self.thread.start()

    def _run(self):
        try:
            with self.queue.turn(self.session, self.seconds, self.resource, self.wanted,
                                 report=lambda *r: self.reports.append(r), address=self.address) as turn:
                for n in range(1, self.layers + 1):
                    self.log.append((self.session, n))
                    if n in self.hold:
                        self.reached[n].set()
                        assert self.hold[n].wait(10)
                    if n < self.layers:
                        turn.give_way(self.wanted, lambda *r: self.reports.append(r))
            self.outcome = "ran"
        except Withdrawn:
            self.outcome = "withdrawn"
        except Crowded:
            self.outcome = "crowded"
        self.log.append((self.session, "done"))

    def join(self):
        self.thread.join(10)
        assert not self.thread.is_alive()


def wait_for(predicate, timeout=10.0):
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.005)


def layers_of(log: list, session: str) -> list:
    return [n for s, n in log if s == session and n != "done"]


def done_order(log: list) -> list:
    return [s for s, n in log if n == "done"]


def test_a_long_run_gives_way_at_its_next_layer_and_goes_on_ahead_of_later_arrivals():
    queue, log = FairQueue(), []
    go = threading.Event()
    long = FakeRun(queue, "tab-a", 100.0, "P=4", 12, log, hold={3: go})
    assert long.reached[3].wait(10)
    quick_go = threading.Event()
    quick = FakeRun(queue, "tab-b", 1.0, "P=16", 2, log, hold={1: quick_go})
    wait_for(lambda: queue.waiting == 1)
    go.set()  # tab-a finishes layer 3 and meets a request due long before it
    assert quick.reached[1].wait(10)
    assert queue.paused == 1 and queue.running() == ["tab-b"]
    later = FakeRun(queue, "tab-c", 100.0, "P=8", 2, log)  # arrives while tab-a is paused, due after it
    wait_for(lambda: queue.waiting == 1)
    quick_go.set()
    for run in (long, quick, later):
        run.join()
    assert done_order(log) == ["tab-b", "tab-a", "tab-c"]
    assert log.index(("tab-b", 1)) == log.index(("tab-a", 3)) + 1  # at the layer boundary, not at the end
    assert layers_of(log, "tab-a") == list(range(1, 13))  # resumed where it paused: each layer once
    assert queue.pauses == 1 and queue.waiting == queue.paused == 0 and queue.running() == []
    assert all(run.outcome == "ran" for run in (long, quick, later))
    assert long.reports and long.reports[-1][0] == 1  # while paused it heard its place: next in line


@pytest.mark.parametrize(("quick_resource", "quick_seconds"), [
    ("P=4", 1.0),  # the same setting is the same model object: its hooks are the paused run's
    (None, 1.0),  # a request that says nothing of its model (an explanation) may touch any
    ("P=16", 500.0),  # due after the long run
])
def test_a_run_gives_way_only_to_a_request_due_before_it_on_another_model(quick_resource, quick_seconds):
    queue, log = FairQueue(), []
    go = threading.Event()
    long = FakeRun(queue, "tab-a", 100.0, "P=4", 4, log, hold={1: go})
    assert long.reached[1].wait(10)
    other = FakeRun(queue, "tab-b", quick_seconds, quick_resource, 2, log)
    wait_for(lambda: queue.waiting == 1)
    go.set()
    long.join()
    other.join()
    assert done_order(log) == ["tab-a", "tab-b"] and queue.pauses == 0
    assert log[:4] == [("tab-a", n) for n in range(1, 5)]


def test_a_request_of_the_paused_model_waits_until_the_paused_run_is_done():
    """While tab-a is paused on P = 4, tab-c's P = 4 request may not run, even when the slot is free."""
    queue, log = FairQueue(), []
    go, quick_go = threading.Event(), threading.Event()
    long = FakeRun(queue, "tab-a", 100.0, "P=4", 3, log, hold={1: go})
    assert long.reached[1].wait(10)
    quick = FakeRun(queue, "tab-b", 1.0, "P=16", 1, log, hold={1: quick_go})
    wait_for(lambda: queue.waiting == 1)
    go.set()
    assert quick.reached[1].wait(10)
    same = FakeRun(queue, "tab-c", 0.5, "P=4", 1, log)  # due before tab-a, but on tab-a's model
    wait_for(lambda: queue.waiting == 1)
    quick_go.set()
    for run in (long, quick, same):
        run.join()
    assert done_order(log) == ["tab-b", "tab-a", "tab-c"]


def test_at_most_max_paused_runs_wait_paused():
    queue, log = FairQueue(max_paused=1), []
    holds = [threading.Event() for _ in range(2)]
    first = FakeRun(queue, "tab-a", 100.0, "P=4", 3, log, hold={1: holds[0]})
    assert first.reached[1].wait(10)
    second = FakeRun(queue, "tab-b", 50.0, "P=8", 3, log, hold={1: holds[1]})
    wait_for(lambda: queue.waiting == 1)
    holds[0].set()  # tab-a pauses for tab-b
    assert second.reached[1].wait(10)
    third = FakeRun(queue, "tab-c", 1.0, "P=16", 1, log)  # due first, but one run is paused already
    wait_for(lambda: queue.waiting == 1)
    holds[1].set()
    for run in (first, second, third):
        run.join()
    assert queue.pauses == 1
    assert done_order(log) == ["tab-b", "tab-c", "tab-a"]  # then tab-c, due before tab-a, takes the free slot


def test_a_paused_run_whose_page_is_gone_leaves_and_a_waiting_one_leaves_the_line():
    queue, log = FairQueue(), []
    gone = {"tab-a": False, "tab-c": False}
    go, quick_go = threading.Event(), threading.Event()
    long = FakeRun(queue, "tab-a", 100.0, "P=4", 12, log, hold={2: go}, wanted=lambda: not gone["tab-a"])
    assert long.reached[2].wait(10)
    quick = FakeRun(queue, "tab-b", 1.0, "P=16", 1, log, hold={1: quick_go})
    wait_for(lambda: queue.waiting == 1)
    go.set()
    assert quick.reached[1].wait(10)
    waiting = FakeRun(queue, "tab-c", 200.0, "P=8", 1, log, wanted=lambda: not gone["tab-c"])
    wait_for(lambda: queue.waiting == 1)
    gone.update({"tab-a": True, "tab-c": True})  # both pages closed
    queue.wake()
    long.join()
    waiting.join()
    assert long.outcome == waiting.outcome == "withdrawn"
    assert layers_of(log, "tab-a") == [1, 2] and layers_of(log, "tab-c") == []  # no layer more
    quick_go.set()
    quick.join()
    assert quick.outcome == "ran" and queue.paused == queue.waiting == 0


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_a_waiting_request_hears_its_place_and_the_estimated_wait():
    clock = Clock()
    queue, log = FairQueue(clock=clock), []
    go = threading.Event()
    running = FakeRun(queue, "tab-a", 10.0, None, 1, log, hold={1: go})  # None: nobody overtakes it
    assert running.reached[1].wait(10)
    clock.now += 4.0  # it has run 4 of its 10 s
    second = FakeRun(queue, "tab-b", 20.0, None, 1, log)
    wait_for(lambda: second.reports)
    third = FakeRun(queue, "tab-c", 30.0, None, 1, log)
    wait_for(lambda: third.reports)
    assert second.reports[0] == (1, 6.0)  # next; the running one's 6 s left
    assert third.reports[0] == (2, 26.0)  # after tab-b: 6 + 20 s
    assert meter.waiting_words(*third.reports[0]) == "waiting: 2nd in line, about 26 s"
    go.set()
    for run in (running, second, third):
        run.join()
    assert done_order(log) == ["tab-a", "tab-b", "tab-c"]


def test_a_session_with_a_paused_run_is_busy_and_its_paused_run_is_never_replaced():
    from vit.serve.queue import Busy

    queue, log = FairQueue(), []
    go, quick_go = threading.Event(), threading.Event()
    long = FakeRun(queue, "tab-a", 100.0, "P=4", 2, log, hold={1: go})
    assert long.reached[1].wait(10)
    quick = FakeRun(queue, "tab-b", 1.0, "P=16", 1, log, hold={1: quick_go})
    wait_for(lambda: queue.waiting == 1)
    go.set()
    assert quick.reached[1].wait(10) and queue.paused == 1
    with pytest.raises(Busy):
        with queue.turn("tab-a", 1.0, "P=32"):
            pass
    quick_go.set()
    long.join()
    quick.join()
    assert long.outcome == "ran" and layers_of(log, "tab-a") == [1, 2]


# --------------------------------------------------------------------------- turns by address (issue 54, High 1)


def test_another_addresss_quick_request_is_next_after_at_most_one_of_a_line_of_sixteen():
    """Address A: 16 pages with P = 4 turns (20 s each), all due long ago; address B's 0.05 s request arrives last.
    Before: served by expected finish, B waited for all 16 (the review: 117 s, 292 s); now it runs at A's running
    run's next layer boundary, and A's run then goes on before A's other pages."""
    clock = Clock()
    queue, log = FairQueue(clock=clock), []
    go = threading.Event()
    first = FakeRun(queue, "a-0", 20.0, "P=4", 3, log, hold={1: go}, address="10.0.0.1")
    assert first.reached[1].wait(10)
    line = []
    for i in range(1, 16):
        line.append(FakeRun(queue, f"a-{i}", 20.0, "P=4", 1, log, address="10.0.0.1"))
        wait_for(lambda i=i: queue.waiting == i)
    clock.now += 100.0  # every one of A's turns is due
    student = FakeRun(queue, "b", 0.05, "shapes", 1, log, address="10.0.0.2")
    wait_for(lambda: queue.waiting == 16)
    go.set()
    for run in (first, student, *line):
        run.join()
    assert log.index(("b", 1)) == log.index(("a-0", 1)) + 1  # at A's running run's next layer, not after its line
    assert done_order(log)[:2] == ["b", "a-0"]  # then A's paused run, ahead of A's later pages
    assert queue.pauses == 1 and all(run.outcome == "ran" for run in (first, student, *line))


def test_addresses_take_turns_and_pages_of_an_address_keep_their_order():
    """A line of A's three pages and B's two (equal cost, arrived in that order): A, B, A, B, A
    (before: A, A, A, B, B)."""
    clock = Clock()
    queue, log = FairQueue(clock=clock), []
    go = threading.Event()
    holder = FakeRun(queue, "hold", 10.0, None, 1, log, hold={1: go}, address="10.0.0.9")
    assert holder.reached[1].wait(10)
    runs = []
    for n, (session, address) in enumerate([("a1", "A"), ("a2", "A"), ("a3", "A"), ("b1", "B"), ("b2", "B")], 1):
        clock.now += 1.0
        runs.append(FakeRun(queue, session, 10.0, None, 1, log, address=address))
        wait_for(lambda n=n: queue.waiting == n)
    go.set()
    for run in (holder, *runs):
        run.join()
    assert done_order(log) == ["hold", "a1", "b1", "a2", "b2", "a3"]


def test_a_waiting_page_of_a_busy_address_waits_its_turn_after_the_other_address():
    """A page of A presses again while another page of A runs: B's request, arrived later, goes first."""
    clock = Clock()
    queue, log = FairQueue(clock=clock), []
    go = threading.Event()
    running = FakeRun(queue, "a1", 10.0, None, 1, log, hold={1: go}, address="A")
    assert running.reached[1].wait(10)
    again = FakeRun(queue, "a2", 1.0, None, 1, log, address="A")  # due first, but A holds the model
    wait_for(lambda: queue.waiting == 1)
    clock.now += 5.0
    other = FakeRun(queue, "b1", 10.0, None, 1, log, address="B")
    wait_for(lambda: queue.waiting == 2 and other.reports)
    assert other.reports[-1][0] == 1  # it hears it is next
    go.set()
    for run in (running, again, other):
        run.join()
    assert done_order(log) == ["a1", "b1", "a2"]


def test_an_address_over_its_share_gives_its_last_waiting_request_back_while_another_address_waits():
    """share 2: A holds three requests here (one running, two waiting). Alone, all stay (a class behind one NAT);
    once another address waits for a handler, A's last-ranked request is refused at once, the others stay."""
    others_wait = threading.Event()
    queue, log = FairQueue(share=2, crowded=lambda address: address == "A" and others_wait.is_set()), []
    go = threading.Event()
    running = FakeRun(queue, "a1", 10.0, None, 1, log, hold={1: go}, address="A")
    assert running.reached[1].wait(10)
    second = FakeRun(queue, "a2", 10.0, None, 1, log, address="A")
    wait_for(lambda: queue.waiting == 1)
    third = FakeRun(queue, "a3", 10.0, None, 1, log, address="A")
    wait_for(lambda: queue.waiting == 2)
    assert not queue.over_share("A") and queue.waiting == 2 and third.outcome is None  # alone: nobody refused
    others_wait.set()
    queue.wake()
    third.join()
    assert third.outcome == "crowded" and queue.waiting == 1
    go.set()
    for run in (running, second):
        run.join()
    assert running.outcome == second.outcome == "ran" and done_order(log) == ["a3", "a1", "a2"]


def test_a_handlers_turn_is_its_clients_address():
    """take_turn reads the address that vit.ui.events.handler sets for the request (vit.serve.files.owned_by)."""
    from vit.serve.files import owned_by
    from vit.serve.queue import take_turn

    queue = FairQueue()
    with owned_by("session:x", "203.0.113.7"), take_turn(queue, "session:x", 1.0, give_up=lambda: True) as turn:
        assert turn.ticket.address == "203.0.113.7"


class Handlers:
    """gradio's queue for one concurrency group, as it serves jobs: first in, first out, ``limit`` handlers at once."""

    def __init__(self, limit: int):
        self.line, self.cond = [], threading.Condition()
        for _ in range(limit):
            threading.Thread(target=self._serve, daemon=True).start()

    def join(self, address: str, job) -> None:
        with self.cond:
            self.line.append((address, job))
            self.cond.notify()

    def waiting_elsewhere(self, address: str | None) -> bool:
        with self.cond:
            return any(a != address for a, _ in self.line)

    def _serve(self) -> None:
        while True:
            with self.cond:
                while not self.line:
                    self.cond.wait()
                _, job = self.line.pop(0)
            job()


def test_a_students_pdf_waits_at_most_one_export_of_an_address_exporting_from_24_pages():
    """Medium 4 of the review of 2026-12-04 at its figures: 24 pages of one address export in a loop through the 8
    handlers, one student presses once (its PDF took 113.8 s; alone 3.9-6.0 s). An export here takes 0.1 s, so in
    line behind the flood it would take 2.4 s; by address, it waits at most for the export running and for the
    refusals of the address's handlers beyond its share (within REPORT_S)."""
    from vit.serve.queue import REPORT_S

    export_s, handlers = 0.1, Handlers(8)
    queue = FairQueue(slots=1, share=2, crowded=handlers.waiting_elsewhere, refusal="refusal-export-share")
    stop, done, refused = threading.Event(), {}, []

    def export(session: str, address: str):
        def job():
            try:
                with queue.turn(session, 2.0, address=address):
                    time.sleep(export_s)
                done[session] = time.monotonic()
            except Crowded as exc:
                refused.append(exc.key)
            if address == "attacker" and not stop.is_set():
                handlers.join(address, export(session, address))  # its page presses again

        return job

    for page in range(24):
        handlers.join("attacker", export(f"page-{page}", "attacker"))
    time.sleep(3 * export_s)
    asked = time.monotonic()
    handlers.join("student", export("student", "student"))
    wait_for(lambda: "student" in done, timeout=30)
    stop.set()
    assert done["student"] - asked < REPORT_S + 4 * export_s, done["student"] - asked
    assert refused and set(refused) == {"refusal-export-share"}


def test_a_students_analysis_gets_a_handler_while_16_pages_wait_on_a_hub_download():
    """Medium 5 of the review of 2026-12-04 at its figures: 16 pages of one address analyse a Hub model offline (each
    fetch ~23.4 s), holding all 16 `model` handlers; a student's analysis sent after took 22.3 s. The download runs
    once, in its own thread; while the student waits for a handler, those waiting on it beyond the share step aside
    (as many as it takes: here one)."""
    from vit.errors import InputError
    from vit.serve.prefetch import Fetches

    handlers, release, fetched = Handlers(16), threading.Event(), []
    fetches = Fetches(share=4, crowded=lambda: handlers.waiting_elsewhere(None))
    outcome, answered = {}, {}

    def offline(progress):
        fetched.append(1)
        release.wait(30)  # the offline timeout, as long as the test needs

    def analyse(page: str, fetch: bool):
        def job():
            try:
                if fetch:
                    fetches.wait("hub-model", offline, poll_s=0.02)
                outcome[page] = "ran"
            except InputError as exc:
                outcome[page] = exc.key
            answered[page] = time.monotonic()

        return job

    for page in range(16):
        handlers.join("class", analyse(f"page-{page}", fetch=True))
    wait_for(lambda: fetches.waiting == 16)
    asked = time.monotonic()
    handlers.join("student", analyse("student", fetch=False))
    wait_for(lambda: "student" in answered)
    assert outcome["student"] == "ran" and answered["student"] - asked < 1.0, answered["student"] - asked
    assert fetches.waiting >= 4 and len(fetched) == 1  # the share goes on waiting on the one download
    release.set()
    wait_for(lambda: len(answered) == 17)
    assert 1 <= list(outcome.values()).count("refusal-fetch-share") <= 12  # as many as the student needed
    assert list(outcome.values()).count("ran") >= 5
