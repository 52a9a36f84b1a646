"""Alembic environment: the URL and settings come from cogd's config."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

from agent.config import load_settings
from agent.db.connect import resolve, sqlalchemy_url
from agent.db.schema import build_metadata

config = context.config
settings = config.attributes.setdefault("settings", load_settings())
url = config.attributes.get("url") or resolve(settings).url
target_metadata = build_metadata(settings.embedding.universal_dim, settings.embedding.native_dim)


def include_object(obj, name, type_, reflected, compare_to):  # type: ignore[no-untyped-def]
    # views are managed by op.execute in revisions, not by the model
    return not (type_ == "table" and reflected and compare_to is None and name.startswith("v_"))


def run_migrations_online() -> None:
    engine = create_engine(sqlalchemy_url(url), poolclass=pool.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            include_object=include_object,
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("cogd migrations run online only: cogd migrate")
run_migrations_online()
