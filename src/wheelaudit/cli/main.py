"""Command line: ``wheelaudit COMMAND ...`` (SPEC §2). Each command lives in ``commands/<name>.py``
with ``add_parser(subparsers)`` and ``run(args) -> int``; this module only dispatches and turns
every failure into a message and an exit code (0 ok, 1 findings, 2 usage or input error)."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys

from wheelaudit import __version__
from wheelaudit.cli.common import UsageError

#: the commands, in the order ``--help`` lists them
COMMANDS = ["check", "inspect", "owners", "dups", "diff", "init", "rules", "schema", "explain"]

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 too; keep its message, drop nothing
        self.print_usage(sys.stderr)
        raise UsageError(message)

    def parse_known_args(self, args=None, namespace=None):
        """As argparse's, and ``parser`` in the result: the innermost (sub)command's parser, the
        one whose usage a complaint about its arguments shows (a subcommand's parse returns first)."""
        ns, extra = super().parse_known_args(args, namespace)
        if getattr(ns, "parser", None) is None:
            ns.parser = self
        return ns, extra


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command's, or with ``only`` (one of :data:`COMMANDS`)
    that command's alone (what :func:`main` builds when the first argument names a command:
    the other commands' modules are neither imported nor set up, so a check's first worker
    starts sooner)."""
    parser = _Parser(prog="wheelaudit", description="Release-audit linter for Python wheels that ship native code.")
    parser.add_argument("--version", "-V", action="version", version=f"wheelaudit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS if only is None else [only]:
        try:
            mod = importlib.import_module(f".{name}", __package__)
        except ModuleNotFoundError as exc:
            if exc.name == f"wheelaudit.cli.{name}":
                continue
            raise
        mod.add_parser(sub)
    return parser


class Signalled(BaseException):
    """SIGTERM, SIGINT or SIGHUP arrived: the run stops (its workers are ended as the scan's
    ``finally`` blocks run) and the command exits 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: the stop signal received, if any: an exception raised where Python ignores it (a finalizer,
#: an at-fork hook) still ends the command with this signal's exit code
_received: list[int] = []


def _on_signal(signum: int, _frame) -> None:
    for sig in _SIGNALS:  # (one is enough: the cleanup it starts is not interrupted again)
        signal.signal(sig, signal.SIG_IGN)
    _received.append(signum)
    raise Signalled(signum)


_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


def console() -> None:
    """The command (the ``wheelaudit`` script, ``python -m wheelaudit``): :func:`main`, with
    SIGTERM, SIGINT and SIGHUP turned into an orderly stop (exit 128 + the signal's number)."""
    for sig in _SIGNALS:
        signal.signal(sig, _on_signal)
    sys.exit(main())


def main(argv: list[str] | None = None) -> int:
    from wheelaudit.archive import NotAWheel
    from wheelaudit.children import ForkFailed
    from wheelaudit.cli.common import OutputFailed, ReaderGone, silence_stdout
    from wheelaudit.ruleset.errors import RulesError
    from wheelaudit.scanner import ScanFailed
    from wheelaudit.settings import SettingError, check_environment

    try:
        args_list = sys.argv[1:] if argv is None else list(argv)
        for warning in check_environment():
            _say(f"wheelaudit: warning: {warning}")
        parser = build_parser(args_list[0] if args_list and args_list[0] in COMMANDS else None)
        args, extra = parser.parse_known_args(args_list)
        if extra:  # (told with the usage of the command they were given to, not the top level's)
            args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
        if not getattr(args, "command", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        from wheelaudit.cli.common import console

        with console(args):  # (-q / -v, for every command)
            code = int(args.run(args))
        if _received:
            raise Signalled(_received[0])
        return code
    except (SettingError, UsageError, ScanFailed, ForkFailed) as exc:
        _say(f"wheelaudit: error: {exc}")
        return EXIT_USAGE
    except RulesError as exc:
        problems = getattr(exc, "problems", None)
        if problems:
            _say(f"wheelaudit: invalid rules ({len(problems)} problems):")
            for problem in problems:
                _say(f"  {problem}")
        else:
            _say(f"wheelaudit: invalid rules: {exc}")
        return EXIT_USAGE
    except NotAWheel as exc:
        from wheelaudit.archive.errors import NoWheels

        _say(f"wheelaudit: {'error' if isinstance(exc, NoWheels) else 'not a wheel'}: {exc}")
        return EXIT_USAGE
    except Signalled as exc:
        _say(f"wheelaudit: stopped by {signal.Signals(exc.signum).name}")
        return 128 + exc.signum
    except KeyboardInterrupt:
        _say("wheelaudit: interrupted")
        return 128 + signal.SIGINT
    except ReaderGone as exc:  # (`inspect ... | head`: the reader had enough; not a failure)
        return exc.code
    except OutputFailed as exc:
        _say(f"wheelaudit: error: {exc}")
        return exc.code
    except BrokenPipeError:  # standard output went away outside a report (help text, say)
        silence_stdout()
        return EXIT_USAGE
    except SystemExit as exc:  # argparse --help / --version
        return int(exc.code or 0) if isinstance(exc.code, int) else 0
    except Exception as exc:  # noqa: BLE001 - a crash is never an exit code: every failure is a message
        if _debug():
            import traceback

            traceback.print_exc()
            return EXIT_USAGE
        _say(f"wheelaudit: internal error ({type(exc).__name__}: {exc}); this is a bug in wheelaudit — "
             "set WHEELAUDIT_DEBUG=1 to see the traceback")
        return EXIT_USAGE


def _say(line: str) -> None:
    """One line on standard error, if there is one to write to."""
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError, AttributeError):
        pass


def _debug() -> bool:
    from wheelaudit.settings import SettingError, flag

    try:
        return flag("WHEELAUDIT_DEBUG", False)
    except SettingError:
        return False
