"""Prompt files -> schema versions: `prompts/<schema>/<version>.md` is the partition `<schema>@<version>`, its YAML
front matter what to extract, its body the model's instructions, its few-shot examples checked against the response
models as it loads. The one place that turns a partition key into a path and back.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from extraction_assets.lib.calibration.model import load_calibration
from extraction_assets.lib.llm.examples import ExampleError, example_answers
from extraction_assets.lib.schemas import SchemaError, SchemaVersion, partition_key, split_key

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n?(.*)\Z", re.DOTALL)
PROMPT_SUFFIX = ".md"
# A prompt goes into every request: a file larger than this is a mistake, never a prompt (the largest bundled is 7 KB).
MAX_PROMPT_BYTES = 256 * 1024
MAX_YAML_NODES = 20_000  # the bundled files' front matter holds at most ~250


def prompt_file(prompts_dir: Path, key: str) -> Path:
    """Where the prompt file of partition `schema@version` lives (SchemaError for a key that is not one)."""
    name, version = split_key(key)
    return prompts_dir / name / f"{version}{PROMPT_SUFFIX}"


def partition_key_of(path: Path) -> str:
    """The partition a prompt file stands for (`prompts/pulse/v1.md` -> `pulse@v1`)."""
    return partition_key(path.parent.name, path.stem)


def _is_prompt_file(path: Path) -> bool:
    """A folder's notes (README.md, hidden or `_`-prefixed files) are not prompt files."""
    return not path.name.startswith((".", "_")) and path.name.lower() != "readme.md"


# libyaml's parser with the safe constructors: a prompt file is parsed by every step of its partition (~5x faster)
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FRONT_MATTER_LINE = 2  # the front matter's first line is the file's second (the first is `---`)


class _BoundedLoader(_YAML_LOADER):  # type: ignore[valid-type,misc]  # the C loader where libyaml is installed
    """The safe loader, bounded: a prompt file is read by the sensor, every run and the review tools, so a few hundred
    bytes must never cost minutes. An alias (`*a`) makes the composed graph share a node, and nine aliases nested nine
    deep are 9**9 values to whatever walks the result (an 858-byte file hung discovery): aliases are refused, and so is
    a graph of more than MAX_YAML_NODES nodes, before anything is constructed. libyaml refuses deep nesting itself."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_tree(node)
        return super().construct_document(node)


def _check_tree(root: yaml.Node) -> None:
    """Raise at the first node reached twice (an alias, at the line of what holds it) or past the node budget; linear
    in the distinct nodes."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, yaml.Node]] = [(root, root)]
    while stack:
        node, parent = stack.pop()
        if id(node) in seen:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                "YAML aliases (*name) are not allowed in a prompt file: write the value out",
                parent.start_mark,
            )
        seen.add(id(node))
        if len(seen) > MAX_YAML_NODES:
            raise yaml.constructor.ConstructorError(
                None, None, f"the front matter holds more than {MAX_YAML_NODES} values", node.start_mark
            )
        children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else node.value
        if isinstance(node, yaml.CollectionNode):  # in document order: an anchor is met before its aliases
            stack.extend((child, node) for child in reversed(children))


def _line_of(root: yaml.Node | None, loc: tuple[str | int, ...]) -> int:
    """The file line of the deepest node of `loc` (a pydantic error's location) in the front matter."""
    node = root
    line = root.start_mark.line if root is not None else 0
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line
    return line + _FRONT_MATTER_LINE


def _validation_message(source: str, root: yaml.Node | None, exc: ValidationError) -> str:
    """Each of pydantic's errors as `file, line N: where: what`."""
    return "; ".join(
        f"{source}, line {_line_of(root, error['loc'])}: {'.'.join(map(str, error['loc'])) or 'front matter'}: "
        + error["msg"].removeprefix("Value error, ")
        for error in exc.errors(include_url=False)
    )


def _front_matter(text: str, source: str) -> tuple[dict[str, Any], yaml.Node | None]:
    """The front matter as a mapping, and its composed node (for the lines of later errors)."""
    loader = _BoundedLoader(text)
    try:
        root = loader.get_single_node()
        meta = loader.construct_document(root) if root is not None else {}
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}, line {mark.line + _FRONT_MATTER_LINE}" if mark else source
        if isinstance(exc, yaml.constructor.ConstructorError):  # valid YAML, refused (an alias, a Python tag)
            raise SchemaError(f"{where}: {exc.problem}") from exc
        raise SchemaError(f"{where}: front matter is not valid YAML: {exc.problem or exc}") from exc
    except (yaml.YAMLError, RecursionError) as exc:
        raise SchemaError(f"{source}: front matter is not valid YAML: {exc}") from exc
    finally:
        loader.dispose()
    if not isinstance(meta, dict):
        raise SchemaError(f"{source}: front matter must be a mapping")
    return meta, root


@functools.lru_cache(maxsize=64)
def parse_schema_text(text: str, source: str = "<string>") -> SchemaVersion:
    """Parse one prompt file's content; raises SchemaError with the file name (and line) on any problem. The same
    content is parsed once per process (a pass reads each prompt file about four times: its discovery, its roles, its
    extraction and its queue), so the version it returns is shared and never changed."""
    match = _FRONT_MATTER.match(text.replace("\r\n", "\n"))
    if not match:
        raise SchemaError(f"{source}: no YAML front matter (a '---' block at the top)")
    meta, root = _front_matter(match.group(1), source)
    meta["instructions"] = match.group(2).strip()
    meta["source_path"] = source
    meta["content_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    try:
        schema = SchemaVersion.model_validate(meta)
    except ValidationError as exc:
        raise SchemaError(_validation_message(source, root, exc)) from exc
    if schema.examples:
        try:
            example_answers(schema)
        except ExampleError as exc:
            line = _line_of(root, ("examples", exc.index))
            raise SchemaError(f"{source}, line {line}: {exc}") from exc
    return schema


def load_schema_file(path: Path) -> SchemaVersion:
    with path.open("rb") as handle:
        data = handle.read(MAX_PROMPT_BYTES + 1)
    if len(data) > MAX_PROMPT_BYTES:
        raise SchemaError(f"{path.as_posix()}: larger than {MAX_PROMPT_BYTES // 1024} KiB: a prompt file is not data")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{path.as_posix()}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    schema = parse_schema_text(text, source=path.as_posix())
    expected = partition_key_of(path)
    if schema.key != expected:
        raise SchemaError(f"{path.as_posix()}: declares {schema.key} but its path says {expected}")
    try:
        calibration = load_calibration(path)
    except (OSError, ValueError) as exc:
        raise SchemaError(f"{path.as_posix()}: its calibration file cannot be read: {exc}") from exc
    if calibration is not None and calibration.schema_version != schema.key:
        raise SchemaError(f"{path.as_posix()}: its calibration file is for {calibration.schema_version}")
    return schema.model_copy(update={"calibration": calibration}) if calibration is not None else schema


def discover_schemas(prompts_dir: Path) -> tuple[dict[str, SchemaVersion], dict[str, str]]:
    """All schema versions under prompts_dir, keyed by partition key, plus the files that failed and why."""
    found: dict[str, SchemaVersion] = {}
    errors: dict[str, str] = {}
    for path in sorted(prompts_dir.glob(f"*/*{PROMPT_SUFFIX}")):
        if not _is_prompt_file(path):
            continue
        try:
            schema = load_schema_file(path)
        except (SchemaError, OSError) as exc:
            errors[path.as_posix()] = str(exc)
            continue
        found[schema.key] = schema
    return found, errors


def load_schema(prompts_dir: Path, key: str) -> SchemaVersion:
    """The schema version for a partition key such as `pulse@v1`: a prompt file of the folder, never a path."""
    return load_schema_file(prompt_file(prompts_dir, key))
