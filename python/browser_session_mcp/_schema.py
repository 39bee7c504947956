"""Extraction schemas: a JSON Schema dict, or a pydantic model class (recognised without importing pydantic)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from .errors import ServiceError

# Non-object schemas come back wrapped under this key over REST (whose results are objects); the client unwraps it.
WRAPPED_RESULT_KEY = "value"


def is_model_class(schema: Any) -> bool:
    """True for a pydantic (v2) model class; duck-typed so that pydantic stays optional."""
    return isinstance(schema, type) and callable(getattr(schema, "model_json_schema", None)) and callable(
        getattr(schema, "model_validate", None)
    )


def prepare_schema(schema: Any) -> Tuple[Optional[Dict[str, Any]], Callable[[Dict[str, Any]], Any]]:
    """Returns the JSON Schema to send and the function that turns the server's ``result`` into the answer."""
    if schema is None:
        return None, lambda result: result
    if is_model_class(schema):
        json_schema: Dict[str, Any] = schema.model_json_schema()
        unwrap = _unwrapper(json_schema)

        def to_model(result: Dict[str, Any]) -> Any:
            try:
                return schema.model_validate(unwrap(result))
            except ValueError as err:  # pydantic's ValidationError is a ValueError
                raise ServiceError(
                    "extraction_invalid", f"The extracted data does not match {schema.__name__}: {err}"
                ) from err

        return json_schema, to_model
    if isinstance(schema, Mapping):
        as_dict = dict(schema)
        return as_dict, _unwrapper(as_dict)
    raise TypeError(f"schema must be a JSON Schema dict or a pydantic model class, not {type(schema).__name__}")


def _unwrapper(schema: Mapping[str, Any]) -> Callable[[Dict[str, Any]], Any]:
    wrapped = not (schema.get("type") == "object" and "anyOf" not in schema and "oneOf" not in schema)
    if wrapped:
        return lambda result: result.get(WRAPPED_RESULT_KEY)
    return lambda result: result
