/** Environment variables as read at the edge (process env merged with `.env`), passed down as plain data. */
export type EnvMap = Readonly<Record<string, string | undefined>>;
