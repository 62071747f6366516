/**
 * The database's encryption marker: the id of the key its sealed fields were written under, set by
 * the first process that opens it with a key, so a process with another key (or none) stops
 * before reading what it cannot open or writing what others could not.
 */
import { checkKeyMarker, type FieldCodec } from '../crypto/index.js';
import type { WeftPrisma } from '../prisma/index.js';
import { rawExecute, rawQuery } from '../prisma/raw.js';
import { setting } from '../tables/index.js';

const KEY_ID_SETTING = 'encryption_key_id';

/** See ThreadStore.ready: the database's encryption marker checked (and set) against `codec`. */
export async function checkEncryptionMarker(weft: WeftPrisma, codec: FieldCodec) {
  const read = async () =>
    ((
      await rawQuery(
        weft,
        `SELECT ${setting.c.value} FROM ${setting.sql} WHERE ${setting.c.key} = ?`,
        [KEY_ID_SETTING],
      )
    )[0]?.[setting.columns.value.name] as string | undefined) ?? null;
  if (!checkKeyMarker(codec, await read()) || codec.keyId === null) return;
  await rawExecute(
    weft,
    `${setting.insertHead} VALUES ${setting.tuple} ON CONFLICT (${setting.c.key}) DO NOTHING`,
    setting.encode({ key: KEY_ID_SETTING, value: codec.keyId }, weft.provider),
  );
  // Another process may have marked it first, with another key.
  checkKeyMarker(codec, await read());
}
