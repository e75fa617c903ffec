import { ThemeProvider, defaultTheme, extendTheme } from '@inkjs/ui';
import { createContext, type ReactNode, useContext } from 'react';

/** What a piece of text means; the theme decides its colour (or none, under NO_COLOR). */
export type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'active' | 'muted' | 'accent' | 'plain';

const COLORS: Record<Tone, string | undefined> = {
  ok: 'green',
  warn: 'yellow',
  bad: 'red',
  info: 'cyan',
  active: 'blue',
  muted: 'gray',
  accent: 'magenta',
  plain: undefined,
};

/** Display settings every component reads. */
export interface Theme {
  /** False under NO_COLOR: no colour at all (bold, dim and inverse still mark things). */
  readonly color: boolean;
}

const ThemeContext = createContext<Theme>({ color: true });

/** Whether colour is wanted: the NO_COLOR convention (https://no-color.org), any non-empty value. */
export function colorEnabled(env: Readonly<Record<string, string | undefined>>): boolean {
  return !env.NO_COLOR;
}

/** The Ink colour of a tone under a theme; undefined means the terminal's default. */
export function toneColor(theme: Theme, tone: Tone | undefined): string | undefined {
  return theme.color && tone ? COLORS[tone] : undefined;
}

/** The current theme. */
export function useTheme(): Theme {
  return useContext(ThemeContext);
}

// @inkjs/ui components colour themselves; without colour their frames and fills go plain.
const monochrome = extendTheme(defaultTheme, {
  components: {
    Spinner: { styles: { frame: () => ({}) } },
  },
});

/** Provides the theme to our components and to @inkjs/ui's. */
export function ThemeRoot({ theme, children }: { readonly theme: Theme; readonly children: ReactNode }): ReactNode {
  return (
    <ThemeContext.Provider value={theme}>
      <ThemeProvider theme={theme.color ? defaultTheme : monochrome}>{children}</ThemeProvider>
    </ThemeContext.Provider>
  );
}
