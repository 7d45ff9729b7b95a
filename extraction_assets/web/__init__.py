"""The local review page (Starlette + Jinja2)."""
