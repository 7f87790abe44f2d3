/** Messages of the visual editor (admin/src/features/visual-editor/). */
export const visualEn = {
  'visual.toggle': 'Visual editor',
  'visual.region': 'The site, beside the form',
  'visual.resize': 'Resize the site preview (arrow keys)',
  'visual.devices': 'Width of the site',
  'visual.device': '{width} px',
  'visual.device.fit': 'Fit',
  'visual.connected': 'Live: {path}',
  'visual.connecting': 'Connecting to the site…',
  'visual.openTab': 'Open in a tab',
  'visual.close': 'Close',
  'visual.reloadFirst': 'Save your changes, then open the visual editor again: the app reloads once to allow this Space’s site in a frame.',
  'visual.noUrl': 'This Space has no preview URL yet: an admin sets it in the Space settings.',
  'visual.silent':
    'The site does not answer the editor. Make sure its pages include the bridge with this Space named, and that the site allows this admin app to frame it (its Content-Security-Policy frame-ancestors, or X-Frame-Options):',
  'visual.frame': 'The site: {name}',
} as const
