#!/usr/bin/env python3
# Reference renderer for the chat-template tests: renders a Jinja chat template with python3-jinja2
# exactly as Hugging Face transformers' apply_chat_template does, so the C++ renderer
# (engine/chat/) can be compared byte for byte.
#
# Environment as transformers builds it in _compile_jinja_template
# (huggingface/transformers src/transformers/utils/chat_template_utils.py @ 5e43e2e8; earlier in
# tokenization_utils_base.py v4.42.0 L1906): ImmutableSandboxedEnvironment(trim_blocks=True,
# lstrip_blocks=True, extensions=[..., jinja2.ext.loopcontrols]), the filter `tojson` replaced by
# json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys), and the
# global raise_exception(message) raising jinja2.exceptions.TemplateError(message). apply_chat_template
# passes messages, tools, documents, add_generation_prompt and the special tokens (bos_token, eos_token, ...).
# (The AssistantTracker extension only adds a {% generation %} tag that none of our templates use.)
#
# Usage: render_reference.py TEMPLATE_FILE CONTEXT_JSON_FILE
# Prints the rendered text on stdout (no newline added), exit 0; on a template error prints
# "<ExceptionClass>: <message>" on stderr (TemplateError for raise_exception), exit 3.
import json
import sys

import jinja2
import jinja2.ext
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        source = f.read()
    with open(sys.argv[2], encoding="utf-8") as f:
        context = json.load(f)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    context.setdefault("tools", None)
    context.setdefault("documents", None)
    try:
        text = env.from_string(source).render(**context)
    except TemplateError as e:
        sys.stderr.write("%s: %s\n" % (type(e).__name__, e))
        return 3
    sys.stdout.buffer.write(text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
