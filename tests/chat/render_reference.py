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
#   Prints the rendered text on stdout (no newline added), exit 0; on a template error prints
#   "<ExceptionClass>: <message>" on stderr (TemplateError for raise_exception), exit 3.
# Usage: render_reference.py --batch TEMPLATE_FILE CONTEXTS_JSON_FILE   (a JSON list of contexts)
#   Prints a JSON list with, per context, {"text": ...} or {"error": "<ExceptionClass>: <message>"}.
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


def render(template, context):
    context = dict(context)
    context.setdefault("tools", None)
    context.setdefault("documents", None)
    return template.render(**context)


def main():
    args = sys.argv[1:]
    batch = args[:1] == ["--batch"]
    if batch:
        args = args[1:]
    with open(args[0], encoding="utf-8") as f:
        source = f.read()
    with open(args[1], encoding="utf-8") as f:
        contexts = json.load(f)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    template = env.from_string(source)
    if batch:
        results = []
        for context in contexts:
            try:
                results.append({"text": render(template, context)})
            except Exception as e:  # noqa: BLE001 - transformers lets every error through; we report its class
                results.append({"error": "%s: %s" % (type(e).__name__, e)})
        sys.stdout.buffer.write(json.dumps(results, ensure_ascii=False).encode("utf-8"))
        return 0
    try:
        text = render(template, contexts)
    except Exception as e:  # noqa: BLE001 - transformers lets every error through; we report its class
        sys.stderr.write("%s: %s\n" % (type(e).__name__, e))
        return 3
    sys.stdout.buffer.write(text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
