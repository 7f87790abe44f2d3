import type { Config } from '../config'
import { randomBytes } from '../kernel/crypto'
import { AppError } from '../kernel/errors'
import { createUserAsOperator, setPasswordAsOperator } from '../modules/auth/service'
import { openCommandKernel } from './kernel'

export interface UserCreateOptions {
  email: string
  name: string
  /** Name of the new Tenant (default: "<name>'s workspace", as on sign-up). */
  tenant?: string
  /** The password, read from standard input (`--password-stdin`); null: generate one and print it. */
  password: string | null
}

/** A refusal the operator can fix (bad input, the address is taken or unknown): printed as one message, exit 1. */
export class UserCreateError extends Error {}

/** A generated password: 18 random bytes, 24 base64url characters (144 bits). */
export const generatePassword = () => Buffer.from(randomBytes(18)).toString('base64url')

/** What `--password-stdin` received, without the one line ending `echo` or a here-string adds. */
export function passwordFromStdin(raw: string): string {
  return raw.replace(/\r?\n$/, '')
}

/**
 * `content-service user create`: a User and its own Tenant through the auth service, whatever REGISTRATION says. The
 * operator's way to make the first admin when sign-up is closed. A generated password is printed once.
 */
export async function runUserCreate(config: Config, opts: UserCreateOptions): Promise<void> {
  const generated = opts.password === null
  const password = opts.password ?? generatePassword()
  const kernel = await openCommandKernel(config)
  try {
    const { user, tenant } = await createUserAsOperator(kernel, {
      email: opts.email,
      name: opts.name,
      password,
      ...(opts.tenant !== undefined ? { tenant_name: opts.tenant } : {}),
    })
    console.log(`created user ${user.id} <${user.email}> "${user.name}" in the new tenant ${tenant.id} "${tenant.name}"`)
    if (generated) {
      console.log('generated password (shown only this once; change it after logging in with POST /v1/auth/password):')
      console.log(password)
    }
  } catch (err) {
    throw refusal(err)
  } finally {
    await kernel.close()
  }
}

/**
 * `content-service user set-password`: the operator's reset, e.g. without PUBLIC_URL (no reset mails) or SMTP. Every
 * login session of the user is signed out. A generated password is printed once.
 */
export async function runUserSetPassword(config: Config, opts: { email: string; password: string | null }): Promise<void> {
  const generated = opts.password === null
  const password = opts.password ?? generatePassword()
  const kernel = await openCommandKernel(config)
  try {
    const r = await setPasswordAsOperator(kernel, { email: opts.email, password })
    console.log(`set the password of user ${r.user.id} <${r.user.email}>; signed out ${r.revoked_sessions} session(s)`)
    if (generated) {
      console.log('generated password (shown only this once):')
      console.log(password)
    }
  } catch (err) {
    throw refusal(err)
  } finally {
    await kernel.close()
  }
}

/** A service refusal as one line naming the options (`tenant_name` is `--tenant` here). */
function refusal(err: unknown): unknown {
  if (!(err instanceof AppError)) return err
  const fields = Object.entries(err.fields ?? {}).map(([k, v]) => `--${k === 'tenant_name' ? 'tenant' : k} ${v.join(', ')}`)
  return new UserCreateError(fields.length ? `invalid input: ${fields.join('; ')}` : err.message)
}
