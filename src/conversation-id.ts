// A conversation's id as clients name it (docs/api.md): any surface that accepts one
// checks it here.
import { z } from "zod";

/** Conversation ids are the client's: keep them printable and short. */
export const ConversationIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:@-]{1,128}$/, "conversation ids are 1-128 letters, digits and . _ : @ -");
