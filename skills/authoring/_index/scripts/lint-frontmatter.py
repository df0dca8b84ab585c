#!/usr/bin/env python3
"""Lint the frontmatter of skills: SKILL.md folders and hierarchical *.md skills.

Arguments (environment):
  SKILL_ARG_PATH  a skill file, or a folder to lint recursively (relative paths resolve
                  against the working directory)

Prints one line per finding, `file:line: error|warning|hint: message`, then a summary.
Exit status: 0 no errors, 1 errors found, 2 usage error. Standard library only; uses
PyYAML when it is installed, otherwise a built-in parser for the YAML subset skills use.
"""

import os
import re
import sys

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
ARG_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
SERVER_EXTENSIONS = (".sh", ".py", ".js", ".ts")
MAX_FILES = 5000


class YamlError(Exception):
    def __init__(self, line, message):
        super().__init__(message)
        self.line = line


# ---------------------------------------------------------------------------
# A small YAML subset: block maps and sequences, plain/quoted/block scalars,
# single-line flow sequences and maps. Enough for skill frontmatter.
# ---------------------------------------------------------------------------

def _scalar(text):
    low = text.lower()
    if low in ("", "~", "null"):
        return None
    if low == "true":
        return True
    if low == "false":
        return False
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", text):
        return float(text)
    return text


def _strip_comment(text):
    quote = None
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'" and (i == 0 or text[i - 1] in " [{,"):
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text.rstrip()


def _split_flow(body, line):
    items, depth, quote, cur = [], 0, None, ""
    for ch in body:
        if quote:
            cur += ch
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            cur += ch
        elif ch in "[{":
            depth += 1
            cur += ch
        elif ch in "]}":
            depth -= 1
            cur += ch
        elif ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if quote or depth:
        raise YamlError(line, "unterminated flow collection")
    if cur.strip():
        items.append(cur.strip())
    return items


def _quoted(text, line):
    q = text[0]
    end = text.find(q, 1)
    while q == "'" and end != -1 and text[end + 1:end + 2] == "'":
        end = text.find(q, end + 2)
    while q == '"' and end != -1 and text[end - 1] == "\\":
        end = text.find(q, end + 1)
    if end == -1:
        raise YamlError(line, "unterminated quoted string")
    if text[end + 1:].strip():
        raise YamlError(line, "unexpected text after a quoted string")
    inner = text[1:end]
    if q == "'":
        return inner.replace("''", "'")
    return _unescape(inner, line) if "\\" in inner else inner


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "/": "/",
            " ": " ", "\t": "\t", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v",
            "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}


def _unescape(text, line):
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1:i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        width = {"x": 2, "u": 4, "U": 8}.get(nxt)
        digits = text[i + 2:i + 2 + width] if width else ""
        if not width or not re.fullmatch(r"[0-9A-Fa-f]+", digits) or len(digits) != width:
            raise YamlError(line, f"invalid escape sequence \\{nxt} in a double-quoted string")
        out.append(chr(int(digits, 16)))
        i += 2 + width
    return "".join(out)


def _flow_item(text, line):
    text = text.strip()
    if text.startswith("["):
        if not text.endswith("]"):
            raise YamlError(line, "unterminated flow sequence")
        return [_flow_item(t, line) for t in _split_flow(text[1:-1], line)]
    if text.startswith("{"):
        if not text.endswith("}"):
            raise YamlError(line, "unterminated flow mapping")
        out = {}
        for part in _split_flow(text[1:-1], line):
            key, sep, value = part.partition(":")
            if not sep:
                raise YamlError(line, f"expected 'key: value' in flow mapping, got {part!r}")
            out[key.strip().strip("\"'")] = _flow_item(value, line)
        return out
    if text[:1] in "\"'":
        return _quoted(text, line)
    return _scalar(text)


_KEY_RE = re.compile(r"^(\"[^\"]*\"|'[^']*'|[^\s\"'#\[{][^:]*?)\s*:(\s|$)")


class MiniYaml:
    def __init__(self, text, first_line):
        self.raw = text.split("\n")
        self.first = first_line
        self.lines = []  # (index into raw, indent, content)
        for idx, raw in enumerate(self.raw):
            if "\t" in raw[: len(raw) - len(raw.lstrip())]:
                raise YamlError(first_line + idx, "tab used for indentation")
            content = raw.strip()
            if content and not content.startswith("#"):
                self.lines.append((idx, len(raw) - len(raw.lstrip(" ")), content))

    def lineno(self, pos):
        return self.first + self.lines[pos][0] if pos < len(self.lines) else self.first + len(self.raw)

    def parse(self):
        if not self.lines:
            return None
        value, pos = self.block(0, self.lines[0][1])
        if pos < len(self.lines):
            raise YamlError(self.lineno(pos), "unexpected content (check the indentation)")
        return value

    def block(self, pos, indent):
        content = self.lines[pos][2]
        if content == "-" or content.startswith("- "):
            return self.seq(pos, indent)
        return self.map(pos, indent)

    def map(self, pos, indent, first_content=None):
        out = {}
        while pos < len(self.lines):
            idx, ind, content = self.lines[pos]
            if first_content is not None:
                content, ind, first_content = first_content, indent, None
            if ind < indent:
                break
            if ind > indent:
                raise YamlError(self.lineno(pos), "unexpected indentation")
            if content == "-" or content.startswith("- "):
                break
            m = re.match(r"^(\"[^\"]*\"|'[^']*'|[^\s\"'#][^:]*?)\s*:(?:\s+(.*)|)$", content)
            if not m:
                raise YamlError(self.lineno(pos), f"expected 'key: value', got {content[:40]!r}")
            key = m.group(1).strip("\"'")
            if key in out:
                raise YamlError(self.lineno(pos), f"duplicate key {key!r}")
            out[key], pos = self.value(m.group(2) or "", pos, indent)
        return out, pos

    def seq(self, pos, indent):
        out = []
        while pos < len(self.lines):
            idx, ind, content = self.lines[pos]
            if ind != indent or not (content == "-" or content.startswith("- ")):
                if ind > indent:
                    raise YamlError(self.lineno(pos), "unexpected indentation in a list")
                break
            rest = content[1:].lstrip()
            if not rest:
                pos += 1
                if pos < len(self.lines) and self.lines[pos][1] > indent:
                    item, pos = self.block(pos, self.lines[pos][1])
                else:
                    item = None
            elif re.match(r"^[^\s\"'\[{#][^:]*?:(\s|$)", rest) and not rest.startswith(("http://", "https://")):
                # "- key: value" starts a mapping whose keys sit at this column.
                item_indent = ind + (len(content) - len(rest))
                item, pos = self.map(pos, item_indent, first_content=rest)
            else:
                item, pos = self.value(rest, pos, indent)
            out.append(item)
        return out, pos

    def value(self, rest, pos, indent):
        """Parse the value after 'key:' or '- ' on line `pos`; return it and the next position."""
        line = self.lineno(pos)
        raw_idx = self.lines[pos][0]
        pos += 1
        rest = _strip_comment(rest)
        if rest == "":
            if pos < len(self.lines):
                nxt_ind, nxt = self.lines[pos][1], self.lines[pos][2]
                if nxt_ind > indent and (nxt == "-" or nxt.startswith("- ") or _KEY_RE.match(nxt)):
                    return self.block(pos, nxt_ind)
                if nxt_ind > indent:
                    # A plain scalar that starts on the next line.
                    rest = _strip_comment(nxt)
                    line = self.lineno(pos)
                    pos += 1
                    return self.plain(rest, pos, indent, line)
                if nxt_ind == indent and (nxt == "-" or nxt.startswith("- ")):
                    return self.seq(pos, indent)
            return None, pos
        if rest[0] in "|>":
            m = re.fullmatch(r"([|>])([+-]?)([1-9]?)([+-]?)", rest)
            if not m:
                raise YamlError(line, f"bad block scalar header {rest!r}")
            chomp = m.group(2) or m.group(4)
            body = []
            j = raw_idx + 1
            while j < len(self.raw):
                raw = self.raw[j]
                if raw.strip() and len(raw) - len(raw.lstrip(" ")) <= indent:
                    break
                body.append(raw)
                j += 1
            while pos < len(self.lines) and self.lines[pos][0] < j:
                pos += 1
            nonblank = [b for b in body if b.strip()]
            # Clip and keep add the final line break only if the text had one (not at the
            # very end of the frontmatter).
            last = max((k for k, b in enumerate(body) if b.strip()), default=-1)
            has_break = raw_idx + 1 + last < len(self.raw) - 1
            cut = min((len(b) - len(b.lstrip(" ")) for b in nonblank), default=0)
            texts = [b[cut:] for b in body]
            trailing = 0
            while texts and not texts[-1].strip():
                texts.pop()
                trailing += 1
            if m.group(1) == "|":
                text = "\n".join(texts)
            else:
                text, prev_blank = "", True
                for t in texts:
                    if not t.strip():
                        text += "\n"
                        prev_blank = True
                    elif t.startswith(" "):
                        text += ("" if prev_blank else "\n") + t
                        prev_blank = False
                    else:
                        text += ("" if prev_blank else " ") + t
                        prev_blank = False
            if chomp == "-":
                return text, pos
            if chomp == "+":
                return text + "\n" * (int(has_break) + trailing), pos
            return (text + "\n") if texts and has_break else text, pos
        # Flow collections and quoted strings may continue on more-indented lines.
        while rest[0] in "[{\"'" and pos < len(self.lines) and self.lines[pos][1] > indent:
            try:
                return _flow_item(rest, line), pos
            except YamlError:
                rest = rest + " " + _strip_comment(self.lines[pos][2])
                pos += 1
        if rest[0] in "[{\"'":
            return _flow_item(rest, line), pos
        return self.plain(rest, pos, indent, line)

    def plain(self, rest, pos, indent, line):
        """A plain scalar, possibly folded over more-indented lines."""
        while pos < len(self.lines) and self.lines[pos][1] > indent:
            rest += " " + _strip_comment(self.lines[pos][2])
            pos += 1
        if re.search(r":(\s|$)", rest):
            raise YamlError(line, "mapping values are not allowed here "
                                  "(a plain value contains ': '; quote the value)")
        if rest.startswith(("&", "*", "!", "%", "@", "`")):
            raise YamlError(line, f"plain value cannot start with {rest[0]!r}; quote it")
        return _scalar(rest), pos


def load_yaml(text, first_line):
    try:
        import yaml  # PyYAML, when available
    except ImportError:
        return MiniYaml(text, first_line).parse()
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark else first_line
        problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        raise YamlError(line, problem) from None


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

class Report:
    def __init__(self):
        self.errors = self.warnings = self.files = 0

    def add(self, path, line, level, message):
        if level == "error":
            self.errors += 1
        elif level == "warning":
            self.warnings += 1
        print(f"{path}:{line}: {level}: {message}")


def split_frontmatter(path, data, report):
    """Return (yaml_text, first_yaml_line, body, first_body_line, key_lines) or None."""
    if data.startswith(b"\xef\xbb\xbf"):
        report.add(path, 1, "warning", "file starts with a UTF-8 byte order mark")
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.add(path, data[: exc.start].count(b"\n") + 1, "error", "file is not valid UTF-8")
        return None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        first = next((i for i, l in enumerate(lines) if l.strip()), None)
        if first is not None and lines[first].rstrip() == "---":
            report.add(path, first + 1, "error", "the opening '---' must be the very first line")
        else:
            report.add(path, 1, "error", "no frontmatter: the file must start with a '---' line")
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            break
    else:
        report.add(path, 1, "error", "frontmatter is never closed by a '---' line")
        return None
    for i2 in range(1, i):
        for ch in lines[i2]:
            if "\x80" <= ch <= "\x9f" or (ch < " " and ch != "\t"):
                report.add(path, i2 + 1, "error", f"control character U+{ord(ch):04X} in frontmatter")
                return None
    key_lines = {}
    for n in range(1, i):
        m = re.match(r"^([A-Za-z0-9_-]+)\s*:", lines[n])
        if m:
            key_lines.setdefault(m.group(1), n + 1)
    return "\n".join(lines[1:i]), 2, "\n".join(lines[i + 1:]), i + 2, key_lines


def check_file(path, report):
    report.files += 1
    with open(path, "rb") as fh:
        data = fh.read()
    base = os.path.basename(path)
    is_skill_md = base.lower() == "skill.md"
    if is_skill_md and base != "SKILL.md":
        report.add(path, 1, "warning", f"name the file SKILL.md, not {base}")
    parts = split_frontmatter(path, data, report)
    if parts is None:
        return
    yaml_text, first, body, body_line, key_lines = parts
    try:
        fm = load_yaml(yaml_text, first)
    except YamlError as exc:
        report.add(path, exc.line, "error", f"invalid YAML: {exc}")
        return
    if fm is None:
        fm = {}
    if not isinstance(fm, dict):
        report.add(path, 2, "error", "frontmatter must be a mapping of 'key: value' lines")
        return

    def at(key):
        return key_lines.get(key, 1)

    description = fm.get("description")
    if not isinstance(description, str) or not description.strip():
        report.add(path, at("description"), "error", "description is required and must be text")
    else:
        if len(description) > 1024:
            report.add(path, at("description"), "warning",
                       f"description is {len(description)} characters; clients reject more than 1024")
        if len(description.strip()) < 30:
            report.add(path, at("description"), "warning",
                       "description is too short to route well: say what the skill does and when to use it")

    if is_skill_md:
        check_agent_skill(path, fm, body, body_line, at, report)
    else:
        check_hierarchical(path, fm, at, report)

    if not body.strip():
        report.add(path, body_line, "warning", "the body is empty")
    elif body.count("\n") > 500:
        report.add(path, body_line, "warning",
                   f"the body has {body.count(chr(10))} lines; move detail into referenced files")


def check_agent_skill(path, fm, body, body_line, at, report):
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    name = fm.get("name")
    if name is None:
        report.add(path, 1, "warning", f"no name; clients default it to the folder name {folder!r}")
    elif not isinstance(name, str):
        report.add(path, at("name"), "error", "name must be text")
    else:
        if not NAME_RE.match(name) or len(name) > 64:
            report.add(path, at("name"), "warning",
                       f"name {name!r} breaks the rule: 1-64 of a-z, 0-9 and single hyphens inside")
        if name != folder:
            report.add(path, at("name"), "warning", f"name {name!r} differs from the folder name {folder!r}")
    description = fm.get("description")
    if isinstance(description, str) and "when" not in description.lower():
        report.add(path, at("description"), "hint",
                   "say when to use the skill ('Use when ...'): agents pick skills by description")
    compat = fm.get("compatibility")
    if compat is not None and (not isinstance(compat, str) or len(compat) > 500):
        report.add(path, at("compatibility"), "warning", "compatibility must be text of at most 500 characters")
    tools = fm.get("allowed-tools")
    if tools is not None and not isinstance(tools, (str, list)):
        report.add(path, at("allowed-tools"), "warning", "allowed-tools should be a space-separated string")
    meta = fm.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        report.add(path, at("metadata"), "warning", "metadata should be a map of strings")
    folder_path = os.path.dirname(os.path.abspath(path))
    in_fence = False
    for n, text in enumerate(body.split("\n")):
        if re.match(r"^\s*(```|~~~)", text):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for m in re.finditer(r"\]\(([^)\s#?]+)[^)]*\)", re.sub(r"`[^`]*`", "", text)):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                continue
            if not os.path.exists(os.path.join(folder_path, target)):
                report.add(path, body_line + n, "warning", f"the body links to {target!r}, which does not exist")


def check_hierarchical(path, fm, at, report):
    keywords = fm.get("keywords")
    if keywords is None:
        report.add(path, 1, "hint", "no keywords: the skill is matched on the words of its name and description")
    elif not isinstance(keywords, list):
        report.add(path, at("keywords"), "warning", "keywords should be a list: keywords: [a, b, c]")
    elif not keywords:
        report.add(path, at("keywords"), "error", "keywords is an empty list")
    else:
        seen = set()
        for kw in keywords:
            text = str(kw).strip().lower()
            if text in seen:
                report.add(path, at("keywords"), "warning", f"keyword {text!r} is listed twice")
            seen.add(text)
            if " " in text:
                report.add(path, at("keywords"), "warning",
                           f"keyword {text!r} has a space; queries are split into words, so use one word")
            elif len(text) < 3:
                report.add(path, at("keywords"), "hint",
                           f"keyword {text!r} is shorter than 3 characters and matches exact words only")
        if len(keywords) > 10:
            report.add(path, at("keywords"), "warning",
                       f"{len(keywords)} keywords: the score is matched/total, so many keywords dilute every match")
    priority = fm.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        report.add(path, at("priority"), "error", f"priority must be a whole number, not {priority!r}")
    inherit = fm.get("inherit")
    if inherit is not None and not isinstance(inherit, bool):
        report.add(path, at("inherit"), "warning", f"inherit must be true or false, not {inherit!r}")
    resource_dir = path[: -len(".md")]
    for field in ("assets", "scripts"):
        entries = fm.get(field)
        if entries is None:
            continue
        if not isinstance(entries, list):
            report.add(path, at(field), "error", f"{field} must be a list")
            continue
        for entry in entries:
            check_entry(path, field, entry, resource_dir, at, report)


def check_entry(path, field, entry, resource_dir, at, report):
    line = at(field)
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
        report.add(path, line, "error", f"each {field} entry needs a 'file'")
        return
    rel = entry["file"]
    segments = rel.split("/")
    if rel.startswith("/") or "\\" in rel or "\0" in rel or ".." in segments or "" in segments:
        report.add(path, line, "error", f"{rel!r} must be a plain relative path inside the resource folder")
        return
    if not isinstance(entry.get("description"), str):
        report.add(path, line, "warning", f"{rel}: add a description so agents know when to fetch it")
    full = os.path.join(resource_dir, *segments)
    if not os.path.isfile(full):
        report.add(path, line, "warning", f"{rel} is declared but {os.path.relpath(full)} does not exist")
    if field != "scripts":
        return
    execution = entry.get("execution", "claude")
    if execution not in ("server", "claude"):
        report.add(path, line, "error", f"{rel}: execution must be 'server' or 'claude', not {execution!r}")
    if execution == "server":
        if not rel.endswith(SERVER_EXTENSIONS):
            report.add(path, line, "warning", f"{rel}: server scripts need one of {', '.join(SERVER_EXTENSIONS)}")
        if os.path.isfile(full) and not os.access(full, os.X_OK):
            report.add(path, line, "hint", f"{rel} is not executable (chmod +x)")
    args = entry.get("args", [])
    if not isinstance(args, list):
        report.add(path, line, "error", f"{rel}: args must be a list")
        return
    for arg in args:
        if not isinstance(arg, dict) or not isinstance(arg.get("name"), str):
            report.add(path, line, "error", f"{rel}: each arg needs a 'name'")
            continue
        if not ARG_NAME_RE.match(arg["name"]):
            report.add(path, line, "warning",
                       f"{rel}: arg {arg['name']!r} should be snake_case; it is passed as SKILL_ARG_{arg['name'].upper()}")
        if "required" in arg and not isinstance(arg["required"], bool):
            report.add(path, line, "warning", f"{rel}: arg {arg['name']}: required must be true or false")


def skill_files(root):
    """Skill files under a folder: SKILL.md anywhere, other *.md outside resource folders."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in (".git", "node_modules"))
        has_skill_md = any(f.lower() == "skill.md" for f in filenames)
        inside_skill = has_skill_md or _inside_skill_folder(root, dirpath)
        for name in sorted(filenames):
            if not name.lower().endswith(".md"):
                continue
            if name.lower() == "skill.md":
                found.append(os.path.join(dirpath, name))
            elif not inside_skill and not _inside_resource_folder(root, dirpath):
                found.append(os.path.join(dirpath, name))
        if len(found) > MAX_FILES:
            raise SystemExit(f"error: more than {MAX_FILES} skill files under {root}; lint a smaller folder")
    return found


def _ancestors(root, dirpath):
    root = os.path.abspath(root)
    current = os.path.abspath(dirpath)
    while current != root and current.startswith(root + os.sep):
        yield current
        current = os.path.dirname(current)


def _inside_skill_folder(root, dirpath):
    return any(os.path.isfile(os.path.join(d, "SKILL.md")) for d in list(_ancestors(root, dirpath))[1:])


def _inside_resource_folder(root, dirpath):
    return any(os.path.isfile(d + ".md") for d in _ancestors(root, dirpath))


def main():
    target = os.environ.get("SKILL_ARG_PATH", "")
    if not target:
        print("error: SKILL_ARG_PATH is not set (a skill file or a folder of skills)", file=sys.stderr)
        return 2
    if not os.path.exists(target):
        print(f"error: {target} does not exist (relative paths resolve against {os.getcwd()})", file=sys.stderr)
        return 2
    report = Report()
    files = [target] if os.path.isfile(target) else skill_files(target)
    for path in files:
        check_file(path, report)
    print(f"{report.files} file(s): {report.errors} error(s), {report.warnings} warning(s)")
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
