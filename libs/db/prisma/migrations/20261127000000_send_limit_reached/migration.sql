-- The accept path stores and counts a group of sends in one statement, and checks the limits in
-- that same statement. When a limit would be passed it calls this to undo the whole statement and
-- takes the slower path that admits emails one by one (services/email/src/infra/accept-store.ts).
-- SQLSTATE ML429 tells that case apart from any real error.
-- The body is an escape string with \073 for its semicolon: prisma migrate deploy splits a file
-- at every semicolon, dollar quotes or not.
CREATE FUNCTION mailer_send_limit_reached() RETURNS integer
LANGUAGE plpgsql VOLATILE
AS E'BEGIN RAISE EXCEPTION ''a send limit would be passed'' USING ERRCODE = ''ML429''\073 END'
