-- Hand-written (Prisma's schema cannot express storage parameters).
-- A letter's row is about 2.1 KB, of which ~1 KB is its sealed payload (EXTERNAL: never compressed).
-- Over the default toast_tuple_target (~2 KB) every insert moved the payload out of line: a second
-- heap insert and a TOAST index entry per letter. Up to 4 KB a row now stays whole in the heap;
-- larger payloads still go out of line.
ALTER TABLE "triage_letters" SET (toast_tuple_target = 4080);
