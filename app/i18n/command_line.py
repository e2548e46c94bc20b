"""The ``isrlab`` command line in the reader's language (issue 33): ``--lang zh-CN``, else the
locale as gettext reads it (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``: ``zh_CN.UTF-8``
is Chinese), else English.

The command's own words (help, progress, results) are msgids of the one catalog (``app.i18n.text``:
``lazy`` for click's help strings, written at import). Click's own words ("Usage:", "Options",
"Show this message and exit.") come from the stdlib's ``gettext`` in each click module: those
modules are pointed at the same lookup, and their msgids are listed below so the catalog holds them.
"""
import os

from .lang import lang_tag
from .text import N_, _, process_lang, use_lang

#: the locale variables in the order GNU gettext reads them
LOCALE_VARS = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")

#: click's words that an ``isrlab --help`` or a usage error shows (click 8's msgids)
CLICK_WORDS = [
    N_("Usage:"), N_("Options"), N_("Commands"), N_("Show this message and exit."), N_("Error: {message}"),
    N_("Try '{command} {option}' for help."), N_("No such command {name!r}."), N_("No such option {name!r}."),
    N_("Missing argument"), N_("Missing option"), N_("Missing parameter: {param_name}"),
    N_("Invalid value for {param_hint}: {message}"), N_("Invalid value: {message}"), N_("default: {default}"),
    N_("Aborted!"), N_("{value!r} is not a valid {number_type}."),
]


def lang_from_environment(environ=None):
    """``"zh-CN"`` or ``"en"`` as the locale says; ``LANGUAGE`` may list several (``zh_CN:en``)."""
    environ = os.environ if environ is None else environ
    for name in LOCALE_VARS:
        value = environ.get(name)
        if not value:
            continue
        for item in value.split(":"):
            tag = lang_tag(item.split(".")[0].split("@")[0])
            if tag:
                return tag
        if name != "LANGUAGE" and value not in ("C", "POSIX"):
            return "en"            # a locale is set, and it is neither language: English
    return "en"


def lang_from_argv(argv):
    """The value of ``--lang X`` or ``--lang=X`` anywhere before ``--``, or None."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--lang="):
            return arg.split("=", 1)[1]
    return None


def _click_gettext(message):
    return _(message)


def choose(argv, environ=None):
    """Set the process's language from ``argv`` (``--lang``) or the locale, and point click's
    words at the catalog; returns the language tag."""
    asked = lang_from_argv(argv)
    tag = lang_tag(asked) if asked else lang_from_environment(environ)
    use_lang(tag or "en")
    import click.core
    import click.decorators
    import click.exceptions
    import click.formatting
    import click.parser
    import click.types
    for module in (click.core, click.decorators, click.exceptions, click.formatting, click.parser, click.types):
        if hasattr(module, "_"):
            module._ = _click_gettext          # click: ``from gettext import gettext as _``
    return process_lang()


def translate_option_help(group):
    """Every option's help of ``group`` and its commands in the process's language. Click's
    ``Option`` reads its help through ``inspect.cleandoc`` when it is built, which turns a lazy
    string into the English one (and click's table wants real strings); that English is the msgid,
    kept on the option and looked up each time a command line is parsed."""
    for command in (group, *getattr(group, "commands", {}).values()):
        # click builds a command's --help option once and keeps it (``_help_option``, click 8.2+),
        # its help written in the language of that moment: let it build a new one
        if getattr(command, "_help_option", None) is not None:
            command._help_option = None
        for param in command.params:
            msgid = getattr(param, "help_msgid", None) or getattr(param, "help", None)
            if isinstance(msgid, str) and msgid:
                param.help_msgid = msgid
                param.help = _(msgid)


def error_text(exc):
    """A ``ScenarioError`` as the command line prints it, in the process's language (``field``
    stays the English path, as in the API's replies)."""
    from .errors import translate_message
    message = translate_message(exc.message)
    text = f"{exc.field}: {message}" if exc.field else message
    if exc.allowed:
        text = _("%(text)s (allowed: %(allowed)s)", text=text, allowed=translate_message(exc.allowed))
    return text
