"""Time limits in CPU time: a tiny limit yields TIMEOUT without hanging, waiting is not work, and
the timer is always cleared."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import pytest

from lineage_udfs.core.enums import ErrorKind, ParseStatus
from lineage_udfs.core.options import ParserOptions
from lineage_udfs.core.parser import LineageParser
from lineage_udfs.core.timeout import ParseTimeoutError, can_enforce_timeout, time_limit

HEAVY = "INSERT INTO t " + " UNION ALL ".join(
    f"SELECT a{i}, b{i}, upper(c{i}) AS c FROM s{i} WHERE x{i} > 0" for i in range(1500)
)


pytestmark = pytest.mark.usefixtures("lost_ticks")


def _busy(seconds: float) -> None:
    """Spend ``seconds`` of this process's CPU time."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_time_limit_raises_in_block() -> None:
    started = time.perf_counter()
    with pytest.raises(ParseTimeoutError), time_limit(0.05):
        _busy(5)
    assert time.perf_counter() - started < 4
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0


def test_time_limit_counts_cpu_time_not_waiting() -> None:
    """A block that waits (no CPU time spent) past its limit is not interrupted: the limit
    counts the work done, which another process's load does not change."""
    with time_limit(0.05):
        time.sleep(0.3)
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0


def test_parse_with_tiny_timeout_returns_timeout_status() -> None:
    parser = LineageParser(ParserOptions(timeout_seconds=0.01))
    started = time.perf_counter()
    result = parser.parse(HEAVY, dialect="spark")
    assert time.perf_counter() - started < 10
    assert result.status in (ParseStatus.TIMEOUT, ParseStatus.PARTIAL)
    assert result.failure is not None and result.failure.kind == ErrorKind.TIMEOUT
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0


def test_parse_off_main_thread_runs_without_limit() -> None:
    results = []

    def work() -> None:
        assert not can_enforce_timeout()
        results.append(
            LineageParser(ParserOptions(timeout_seconds=0.001)).parse(
                "INSERT INTO t SELECT a FROM s", dialect="spark"
            )
        )

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(30)
    assert results and results[0].status == ParseStatus.OK


def test_time_limit_wrapped_by_sqlglot_tokenizer_ends_the_split() -> None:
    """sqlglot's tokenizer re-raises any error as ``TokenError(...) from e``: the split must
    still stop at the limit instead of retrying its repairs without one."""
    from lineage_udfs.core.statements import split_statements

    wide = "INSERT INTO t SELECT " + " + ".join(f"(a{i} * {i})" for i in range(40000)) + " FROM s"
    with pytest.raises(ParseTimeoutError), time_limit(0.05):
        split_statements(wide, "spark")
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0


def test_limit_holds_when_code_swallows_the_timeout() -> None:
    """A finalizer or a broad ``except`` may swallow the handler's exception: the timer keeps
    firing after expiry and the block still ends in ParseTimeoutError."""
    swallowed = 0
    with pytest.raises(ParseTimeoutError), time_limit(0.05):
        deadline = time.process_time() + 0.4
        while time.process_time() < deadline:
            try:
                _busy(0.01)
            except ParseTimeoutError:
                swallowed += 1
    assert swallowed >= 2  # re-fired after the first one was lost
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0
    assert signal.getsignal(signal.SIGPROF) is signal.SIG_DFL


def test_sqlfluff_budget_hands_over_to_sqlparse_with_the_syntax_error() -> None:
    # broken (not cut short), long enough that sqlfluff needs far more than its budget
    body = ", ".join(f"upper(trim(c{i})) AS c{i}" for i in range(600))
    sql = f"INSERT INTO db.t SELECT {body} FROM db.s WHERE c1 = = 1 AND c2 = 2"
    options = ParserOptions(sqlfluff_timeout_seconds=0.05)
    started = time.perf_counter()
    result = LineageParser(options).parse(sql, dialect="spark")
    assert time.perf_counter() - started < 5
    assert result.status == ParseStatus.PARTIAL
    assert result.parser.value == "sqlparse"
    assert result.failure is not None and result.failure.kind == ErrorKind.SYNTAX
    assert (result.sources, result.targets) == (("db.s",), ("db.t",))
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0


def test_a_tick_while_the_block_exits_still_stops_the_timer() -> None:
    """The limit expires just as the block ends, so its tick is handled in ``__exit__``
    (Python runs a signal handler in the frame that is running). The tick must not escape
    before the timer is stopped (a running timer raises in whatever the process does next);
    the block still ends in ParseTimeoutError. The handler is called here as the signal
    machinery would call it, with ``__exit__``'s frame."""
    exit_code = time_limit.__exit__.__code__
    before = signal.getsignal(signal.SIGPROF)
    limit = time_limit(30)

    def tick_on_exit(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "call" and frame.f_code is exit_code:
            limit._expire(signal.SIGPROF, frame)

    with pytest.raises(ParseTimeoutError):
        with limit:
            sys.setprofile(tick_on_exit)
        sys.setprofile(None)  # (not reached: the exit raises)
    sys.setprofile(None)
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0
    assert signal.getsignal(signal.SIGPROF) == before


def test_a_tick_during_an_import_lets_the_import_finish(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A module interrupted in its top-level code would stay half-initialised for the rest of
    the process (a library's first use under a limit): the limit waits for the import to end,
    then the block ends in ParseTimeoutError."""
    (tmp_path / "slow_module_for_the_limit.py").write_text(
        "import time\n"
        "end = time.process_time() + 0.3\n"
        "while time.process_time() < end:\n"
        "    pass\n"
        "COMPLETE = True\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_module_for_the_limit", raising=False)
    with pytest.raises(ParseTimeoutError), time_limit(0.05):
        import slow_module_for_the_limit  # noqa: F401
    assert sys.modules["slow_module_for_the_limit"].COMPLETE is True
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0


def test_an_error_the_timeout_turned_into_is_still_a_timeout() -> None:
    """Code that wraps what it catches (``except Exception as e: raise Other() from e``) turns
    the handler's exception into its own: the block ran out of time all the same."""

    def wrapping() -> None:
        try:
            _busy(5)
        except Exception as exc:
            raise ValueError("the library's own error") from exc

    with pytest.raises(ParseTimeoutError) as raised, time_limit(0.05):
        wrapping()
    assert isinstance(raised.value.__cause__, ValueError)
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0


def test_an_error_within_the_limit_stays_itself() -> None:
    with pytest.raises(KeyError), time_limit(5):
        {}["missing"]


def test_the_first_statement_for_sqlfluff_gets_the_answer_of_the_next_ones() -> None:
    """sqlfluff's import and dialect take most of a second of CPU time, in the process's first
    statement to reach the tier: that is no part of the statement's budget. In a fresh process
    whose budget is smaller than that, the first statement is read as the second is."""
    code = (
        "from lineage_udfs.core.parser import LineageParser;"
        "from lineage_udfs.core.options import ParserOptions;"
        "p = LineageParser(ParserOptions(sqlfluff_timeout_seconds=0.2));"
        "sql = 'INSERT LOW_PRIORITY IGNORE INTO db.t SELECT a FROM db.s';"
        "r = [p.parse(sql, dialect='mysql') for _ in range(2)];"
        "print([(x.parser.value, x.status.value, x.sources, x.targets) for x in r])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    row = ("sqlfluff", "ok", ("db.s",), ("db.t",))
    assert out == repr([row, row])
