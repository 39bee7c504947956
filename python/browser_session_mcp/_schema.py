"""Extraction schemas: a JSON Schema dict, or a pydantic model class (recognised without importing pydantic)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from .errors import ExtractionInvalid

# Non-object schemas come back wrapped under this key over REST (whose results are objects), with data.wrapped true.
WRAPPED_RESULT_KEY = "value"


def is_model_class(schema: Any) -> bool:
    """True for a pydantic (v2) model class; duck-typed so that pydantic stays optional."""
    return isinstance(schema, type) and callable(getattr(schema, "model_json_schema", None)) and callable(
        getattr(schema, "model_validate", None)
    )


def prepare_schema(schema: Any) -> Tuple[Optional[Dict[str, Any]], Callable[[Any], Any]]:
    """Returns the JSON Schema to send and the function that turns the server's data (the value itself) into the answer."""
    if schema is None:
        return None, lambda value: value
    if is_model_class(schema):
        json_schema: Dict[str, Any] = schema.model_json_schema()

        def to_model(value: Any) -> Any:
            try:
                return schema.model_validate(value)
            except ValueError as err:  # pydantic's ValidationError is a ValueError
                raise ExtractionInvalid(
                    "extraction_invalid", f"The extracted data does not match {schema.__name__}: {err}"
                ) from err

        return json_schema, to_model
    if isinstance(schema, Mapping):
        return dict(schema), lambda value: value
    raise TypeError(f"schema must be a JSON Schema dict or a pydantic model class, not {type(schema).__name__}")


def unwrap(data: Mapping[str, Any]) -> Any:
    """The extracted value of a REST answer's ``data``: the server says with ``wrapped`` whether it is ``result.value``."""
    result = data["result"]
    return result.get(WRAPPED_RESULT_KEY) if data.get("wrapped") else result
