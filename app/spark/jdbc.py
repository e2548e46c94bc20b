"""From the store's SQLAlchemy URL to Spark's JDBC reader and writer.

SQLite (``sqlite:///PATH``) is read and written through Debian's xerial driver
(``libxerial-sqlite-jdbc-java``), PostgreSQL (``postgresql[+driver]://user:pw@host:port/db``)
through ``libpostgresql-jdbc-java``. PostgreSQL over a Unix socket cannot be reached by the JDBC
driver: give a host and port (the JDBC URL is built from them).

Writes: SQLite allows one writer at a time, so a DataFrame is written to it from one partition
(``coalesce(1)``); PostgreSQL takes the partitions in parallel (``write_partitions``).
"""
from dataclasses import dataclass, field

from sqlalchemy.engine import make_url

from app.errors import UserError

SQLITE_BUSY_TIMEOUT_MS = 60_000


class JdbcError(UserError):
    """A store URL Spark cannot reach through JDBC."""


@dataclass
class Jdbc:
    url: str
    properties: dict = field(default_factory=dict)
    sqlite: bool = False

    def options(self, **more):
        return {"url": self.url, **self.properties, **{k: str(v) for k, v in more.items()}}

    @property
    def write_partitions(self):
        return 1 if self.sqlite else 4


def jdbc_of(sqlalchemy_url):
    """The JDBC URL and connection properties of a store URL."""
    url = make_url(str(sqlalchemy_url))
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise JdbcError("db", "an in-memory SQLite database cannot be shared with Spark",
                            "sqlite:///PATH to a file")
        import os
        path = os.path.abspath(url.database)
        return Jdbc(url=f"jdbc:sqlite:{path}",
                    properties={"driver": "org.sqlite.JDBC", "busy_timeout": str(SQLITE_BUSY_TIMEOUT_MS)},
                    sqlite=True)
    if backend == "postgresql":
        host = url.host or url.query.get("host")
        if not host or str(host).startswith("/"):
            raise JdbcError("db", "PostgreSQL over a Unix socket is not reachable through JDBC",
                            "postgresql://user@HOST:PORT/DB with a TCP host")
        port = url.port or url.query.get("port") or 5432
        props = {"driver": "org.postgresql.Driver", "user": url.username or ""}
        if url.password:
            props["password"] = url.password
        return Jdbc(url=f"jdbc:postgresql://{host}:{port}/{url.database}", properties=props)
    raise JdbcError("db", f"{backend} is not supported by the analysis job", "sqlite, postgresql")


def read_table(spark, jdbc, table, schema, partition_column=None, bounds=None, partitions=None,
               where=None):
    """Read a table (or ``SELECT * ... WHERE where``) with an explicit schema.

    ``schema`` is a StructType: its column list is what is selected and its types are given to
    the driver as ``customSchema`` (SQLite would otherwise infer BIGINT as decimal(20,0)). With
    ``partition_column`` and ``bounds`` = (lower, upper), the read is split into ``partitions``
    ranges read in parallel."""
    columns = ", ".join(_quote(f.name) for f in schema.fields)
    query = f"SELECT {columns} FROM {table}" + (f" WHERE {where}" if where else "")
    return read_query(spark, jdbc, query, schema, partition_column, bounds, partitions)


def read_query(spark, jdbc, query, schema, partition_column=None, bounds=None, partitions=None):
    """Read the rows of a SELECT (its columns named as ``schema``'s fields), as ``read_table``."""
    reader = spark.read.format("jdbc").options(**jdbc.options(
        dbtable=f"({query}) AS src", customSchema=custom_schema(schema), fetchsize=5000))
    if partition_column and bounds and partitions and partitions > 1 and bounds[1] > bounds[0]:
        reader = reader.options(partitionColumn=partition_column, lowerBound=str(bounds[0]),
                                upperBound=str(bounds[1] + 1), numPartitions=str(partitions))
    df = reader.load()
    return df.select(*[df[f.name].cast(f.dataType).alias(f.name) for f in schema.fields])


def _quote(name):
    return f'"{name}"'


def custom_schema(schema):
    names = {"LongType": "BIGINT", "IntegerType": "INT", "StringType": "STRING", "DoubleType": "DOUBLE",
             "BooleanType": "BOOLEAN", "FloatType": "FLOAT", "ShortType": "SHORT"}
    return ", ".join(f"{f.name} {names[type(f.dataType).__name__]}" for f in schema.fields)


def write_table(df, jdbc, table, partitions=None):
    """Append a DataFrame to an existing table (created by the migrations)."""
    n = partitions or jdbc.write_partitions
    df = df.coalesce(1) if n == 1 else df.repartition(n)
    df.write.format("jdbc").options(**jdbc.options(dbtable=table, batchsize=5000)).mode("append").save()
