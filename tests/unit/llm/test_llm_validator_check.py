"""instructor's async-validator refusal, decided once per response model class (`lib/llm/validator_check.py`)."""

from __future__ import annotations

import functools
import inspect

import pytest
from pydantic import BaseModel

from extraction_assets.lib.llm import validator_check


class Plain(BaseModel):
    title: str


@functools.cache
def _with_async_validator() -> type[BaseModel]:
    """A model instructor refuses (an async field validator), made on first use: instructor imports openai's types,
    which every test worker would import again only to collect this file."""
    from instructor.v2.validation.async_validators import async_field_validator

    class WithAsyncValidator(BaseModel):
        title: str

        @async_field_validator("title")
        async def checked(self, value: str) -> str:
            return value

    return WithAsyncValidator


def test_a_class_that_passed_is_not_walked_again_and_a_refused_one_always_is() -> None:
    with_async_validator = _with_async_validator()
    walks: list[object] = []

    def walk(model: object) -> None:
        walks.append(model)
        if model is with_async_validator:
            raise ValueError("refused")

    check = validator_check.once_per_class(walk)
    for _ in range(5):
        check(Plain)
        with pytest.raises(ValueError, match="refused"):
            check(with_async_validator)
    check(list[Plain])  # not a class: walked every time
    check(list[Plain])
    assert walks.count(Plain) == 1
    assert walks.count(with_async_validator) == 5
    assert walks.count(list[Plain]) == 2


def test_installed_once_and_instructor_still_refuses_async_validators() -> None:
    from instructor.v2.core import response_model as instructor_response_model
    from instructor.v2.validation import async_validators

    validator_check.install()
    installed = async_validators.reject_async_validators
    validator_check.install()
    assert async_validators.reject_async_validators is installed
    assert instructor_response_model.prepare_response_model(Plain) is not None
    for _ in range(2):  # fail closed, every time
        with pytest.raises(ValueError, match="async validators"):
            instructor_response_model.prepare_response_model(_with_async_validator())


def test_instructor_looks_the_check_up_at_each_call() -> None:
    """Replacing the module's function only works while instructor imports it inside the calling functions; an
    upgrade that binds it at import time would silently walk every request again."""
    from instructor.v2.core import client as instructor_client
    from instructor.v2.core import response_model as instructor_response_model

    line = "from instructor.v2.validation.async_validators import reject_async_validators"
    for module in (instructor_client, instructor_response_model):
        source = inspect.getsource(module)
        assert f"    {line}" in source, module.__name__  # inside a function
        assert f"\n{line}" not in source, module.__name__  # never at module level
