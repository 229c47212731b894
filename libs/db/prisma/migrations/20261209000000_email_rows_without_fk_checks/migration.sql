-- The accept path inserts each email's recipients and content in the statement that inserts the
-- email (services/email/src/infra/accept-sql.ts), joined to the emails that statement inserted:
-- no other code inserts these rows, so they never point at a missing email. Their foreign keys
-- checked it anyway, each row by a query of its own that also locked the new email row: 10-12 %
-- of PostgreSQL's time in a batch of accepted emails (perf, bench/README.md). The constraints go,
-- and deleting emails still removes their recipients and content, as ON DELETE CASCADE did,
-- through one statement-level trigger per DELETE, whoever deletes them (the retention pruner, the
-- accept path taking back emails a limit refused, an operator).
-- schema.prisma keeps the relations for Prisma's queries: libs/db/test/migrations.int.test.ts
-- expects these two foreign keys, and nothing else, in Prisma's diff.
-- The function body is an escape string with \073 for its semicolons: prisma migrate deploy
-- splits a file at every semicolon, dollar quotes or not. Its search_path is the migration's, so
-- the trigger finds the tables of its own schema whatever the deleting session's path.
ALTER TABLE "email_recipients" DROP CONSTRAINT "email_recipients_email_id_fkey";
ALTER TABLE "email_contents" DROP CONSTRAINT "email_contents_email_id_fkey";
CREATE FUNCTION mailer_delete_email_rows() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT
AS E'BEGIN DELETE FROM email_recipients r USING deleted d WHERE r.email_id = d.id\073 DELETE FROM email_contents c USING deleted d WHERE c.email_id = d.id\073 RETURN NULL\073 END';
CREATE TRIGGER emails_delete_rows AFTER DELETE ON emails
REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION mailer_delete_email_rows();
