psql "$DATABASE_URL" <<SQL
TRUNCATE audit_log;
SQL